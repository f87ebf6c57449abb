/**
 * The curator through the agent provider: given an intent digest, the prior
 * hit and up to five candidates, the agent answers create / update / skip and
 * may write the entry's content. The answer is validated with zod here
 * (AGENT_ANSWER_INVALID when unusable); WikiCuratorService then checks the
 * decision against the prior and candidates and does the writing itself
 * (dedup first), so a bad answer can never touch a file.
 */
import { z } from 'zod';
import { clipOutsideMarkers as clip } from '../../core/redact.js';
import type { CurateFn, CuratorDecision, CuratorInput } from '../curation/curator.js';
import { SLUG_PATTERN } from '../text.js';
import { askForJson, type ObserverAgentOptions } from './json.js';

const entrySchema = z.object({
  type: z.enum(['context', 'entity']).default('context'),
  slug: z.string().max(120).regex(SLUG_PATTERN, 'slug must be kebab-case (a-z, 0-9, -)'),
  request: z.string().trim().min(1).max(500),
  title: z.string().trim().min(1).max(200).optional(),
  summary: z.string().trim().min(1).max(6_000),
  context: z.string().max(6_000).optional(),
  solution: z.string().trim().min(1).max(12_000),
  tags: z.array(z.string().min(1).max(80)).max(20).optional(),
  facet: z.enum(['hypothesis', 'protocol', 'command', 'failure', 'note']).optional(),
  confidence: z.number().min(0).max(1).optional(),
  command: z.string().max(2_000).optional(),
  persist_note: z.string().max(2_000).optional(),
  references: z.array(z.string().min(1).max(500)).max(20).optional(),
});

export const curatorAnswerSchema = z
  .object({
    action: z.enum(['create', 'update', 'skip']),
    reason: z.string().trim().min(1).max(300),
    target_id: z.string().regex(/^[CNS]\d{3,}$/, 'target_id is an entry id such as C012').optional(),
    entry: entrySchema.optional(),
  })
  .refine((a) => a.action !== 'skip' || a.entry === undefined, { message: 'a skip carries no entry', path: ['entry'] });
export type CuratorAnswer = z.infer<typeof curatorAnswerSchema>;

export function curatorPrompt(input: CuratorInput): string {
  const d = input.digest;
  const lines = [
    'You curate a project wiki from an interactive Claude Code session. Decide whether what this intent learned should be',
    'filed: create a new entry, update an existing one, or skip. Do not change any file; the service writes what you decide.',
    'Answer with one JSON object and nothing else:',
    '{"action": "create|update|skip", "reason": "why, one line", "target_id": "C012 (update only: the prior or a candidate)",',
    ' "entry": {"type": "context|entity", "slug": "kebab-case", "request": "the question this answers", "title": "…", "summary": "…",',
    '   "context": "…", "solution": "the reusable answer or fix", "tags": ["…"], "facet": "hypothesis|protocol|command|failure|note",',
    '   "confidence": 0.0-1.0, "command": "for facet command", "persist_note": "why this is worth keeping"}}',
    'Skip when nothing reusable was learned or an existing entry already says it. Prefer update over create when the prior covers the same question.',
    input.mode === 'intent' ? 'This is a whole intent (several turns); file the outcome, not each turn.' : 'This is one turn (legacy per-turn mode).',
    '',
    `Intent: ${d.nodeTitle} [${d.intentKey}] in session ${d.sessionId}, ${d.turns.length} turn(s), anchor ${d.anchorExplorationId}.`,
    `Request: ${clip(d.request, 1_000)}`,
  ];
  for (const t of d.turns.slice(0, 12)) {
    lines.push('', `Turn ${t.explorationId} (${t.result}, ${t.toolCount} tools): ${clip(t.request, 500)}`, `Summary: ${clip(t.summary, 1_500)}`);
    if (t.persistMeta?.solution_detail) lines.push(`Solution detail: ${clip(t.persistMeta.solution_detail, 1_500)}`);
  }
  if (d.files.length) lines.push('', `Files: ${d.files.slice(0, 30).join(', ')}`);
  if (d.commands.length) lines.push(`Commands: ${d.commands.slice(0, 12).map((c) => clip(c, 160)).join(' ; ')}`);
  lines.push('', `Prior hit: ${input.prior ? `${input.prior.entryId} (${input.prior.score.toFixed(2)}) ${input.prior.request} — ${input.prior.excerpt}` : '(none)'}`);
  if (input.candidates.length) lines.push('Candidates:', ...input.candidates.map((c) => `- ${c.entryId} (${c.score.toFixed(2)}) ${c.request} — ${clip(c.excerpt, 200)}`));
  return lines.join('\n');
}

export function decisionFromAnswer(a: CuratorAnswer): CuratorDecision {
  const e = a.entry;
  return {
    action: a.action,
    reason: a.reason,
    ...(a.target_id ? { targetId: a.target_id } : {}),
    ...(e
      ? {
          entry: {
            type: e.type,
            slug: e.slug,
            request: e.request,
            summary: e.summary,
            solution: e.solution,
            ...(e.title ? { title: e.title } : {}),
            ...(e.context ? { context: e.context } : {}),
            ...(e.tags ? { tags: e.tags } : {}),
            ...(e.facet ? { facet: e.facet } : {}),
            ...(e.confidence !== undefined ? { confidence: e.confidence } : {}),
            ...(e.command ? { command: e.command } : {}),
            ...(e.persist_note ? { persistNote: e.persist_note } : {}),
            ...(e.references ? { references: e.references } : {}),
          },
        }
      : {}),
  };
}

export type AgentCuratorOptions = ObserverAgentOptions;

/** The `curate` seam backed by the agent provider (role `curate`, read-only tools). */
export function createAgentCurator(o: AgentCuratorOptions): CurateFn {
  return async (input) => {
    const answer = await askForJson(o, {
      role: 'curate',
      taskTitle: `curate ${input.digest.sessionId}:${input.digest.intentKey}`,
      prompt: curatorPrompt(input),
      whenAsked: 'No one can answer here; decide from the digest.',
      what: `curator decision for ${input.digest.intentKey}`,
    }, curatorAnswerSchema);
    return decisionFromAnswer(answer);
  };
}
