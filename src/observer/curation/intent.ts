/**
 * Intent keys, their aliases, which intents are curated on close, and how a
 * summary's flowchart hint becomes a title delta (FORMATS §8.7).
 */
import type { FlowchartHint, TitleDelta } from '../bundle/types.js';

export const INTENT_KEYS = ['explore', 'project_design', 'implement', 'refactor', 'debug', 'test_verify', 'devops', 'research', 'general', 'greeting'] as const;
export type IntentKey = (typeof INTENT_KEYS)[number];

const ALIASES: Record<string, IntentKey> = {
  fix: 'debug',
  bugfix: 'debug',
  bug: 'debug',
  debugging: 'debug',
  coding: 'implement',
  feature: 'implement',
  implementation: 'implement',
  build: 'implement',
  testing: 'test_verify',
  test: 'test_verify',
  ci: 'test_verify',
  verify: 'test_verify',
  design: 'project_design',
  architecture: 'project_design',
  deploy: 'devops',
  ops: 'devops',
  infra: 'devops',
  investigate: 'research',
  exploration: 'explore',
  question: 'explore',
  chat: 'general',
  hello: 'greeting',
};

/** Known key, alias, or `<key>_…` prefix; anything else is `general`. */
export function normalizeIntentKey(raw: string | undefined | null): IntentKey {
  const key = (raw ?? '').trim().toLowerCase().replace(/[\s-]+/g, '_');
  if ((INTENT_KEYS as readonly string[]).includes(key)) return key as IntentKey;
  if (ALIASES[key]) return ALIASES[key]!;
  for (const k of INTENT_KEYS) if (key.startsWith(`${k}_`)) return k;
  const head = key.split('_')[0] ?? '';
  if (ALIASES[head]) return ALIASES[head]!;
  return 'general';
}

export const DEFAULT_CURATE_INTENTS: readonly IntentKey[] = ['project_design', 'implement', 'refactor', 'debug', 'devops', 'research'];

/** FLOW_WIKI_CURATE_INTENTS (comma or space separated) overrides the default list. */
export function curateIntentsFromEnv(env: Record<string, string | undefined>): ReadonlySet<IntentKey> {
  const raw = env.FLOW_WIKI_CURATE_INTENTS?.trim();
  if (!raw) return new Set(DEFAULT_CURATE_INTENTS);
  return new Set(raw.split(/[\s,]+/).filter(Boolean).map(normalizeIntentKey));
}

export function legacyPerTurnFromEnv(env: Record<string, string | undefined>): boolean {
  return /^(1|true|yes)$/i.test(env.FLOW_WIKI_LEGACY_PER_TURN ?? '');
}

const GREETING = /^(hi|hello|hey|你好|您好|在吗|ping|test|thanks|thank you)[\s!.?！。]*$/i;
const RULES: Array<[IntentKey, RegExp]> = [
  ['debug', /\b(fix|bug|error|fail(s|ed|ing)?|broken|crash|exception|stack ?trace|debug|why does)\b|报错|修复|错误|失败|崩溃/i],
  ['refactor', /\b(refactor|rename|clean ?up|extract|restructure|simplify)\b|重构/i],
  ['test_verify', /\b(tests?|coverage|verify|lint|ci)\b|测试|验证/i],
  ['devops', /\b(deploy|docker|kubernetes|k8s|pipeline|release|nginx|terraform)\b|部署|发布/i],
  ['project_design', /\b(design|architecture|architect|plan the|structure of)\b|设计|架构|方案/i],
  ['implement', /\b(implement|add|create|write|build|support|make)\b|实现|添加|新增|开发/i],
  ['research', /\b(research|compare|evaluate|investigate|benchmark|which library|options for)\b|调研|对比|比较/i],
  ['explore', /\b(what|where|how|explain|show|find|list|read|look)\b|\?|是什么|怎么|哪里|为什么|解释/i],
];

/** A deterministic intent for a question, used when no model gives a hint. */
export function classifyIntent(question: string): IntentKey {
  const q = question.trim();
  if (GREETING.test(q)) return 'greeting';
  for (const [key, re] of RULES) if (re.test(q)) return key;
  return 'general';
}

export function normalizeTitleDelta(raw: unknown): TitleDelta | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  const v = String(raw).toLowerCase();
  return (['idle', 'continue', 'refine', 'pivot', 'blocked', 'done'] as const).find((d) => d === v) ?? 'continue';
}

export interface PriorIntent {
  intentKey: string;
  nodeTitle: string;
}

/**
 * titleDelta = explicit, else the hint's, else inferred: no prior → pivot; a
 * different intent key → pivot; a different title → refine; else continue.
 * Leaving a greeting with a non-greeting hint is always a pivot.
 */
export function resolveTitleDelta(prior: PriorIntent | null, hint: Pick<FlowchartHint, 'intentKey' | 'nodeTitle' | 'titleDelta'>, explicit?: TitleDelta): TitleDelta {
  const leavingGreeting = prior !== null && (prior.intentKey === 'greeting' || prior.intentKey === 'idle') && hint.intentKey !== 'greeting';
  const chosen = explicit ?? hint.titleDelta;
  if (chosen === 'idle' || chosen === 'blocked' || chosen === 'done') return chosen;
  if (leavingGreeting) return 'pivot';
  if (chosen) return chosen;
  if (!prior) return 'pivot';
  if (prior.intentKey !== hint.intentKey) return 'pivot';
  if (prior.nodeTitle !== hint.nodeTitle) return 'refine';
  return 'continue';
}
