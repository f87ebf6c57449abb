/**
 * Model tiers: hard / medium / easy, each overridable by an environment
 * variable, and the fallback chain the pipelines walk when a model fails:
 * strongest first, one retry with the next weaker model per agent call.
 */
import type { Complexity } from '../core/types.js';

export const DEFAULT_TIERS: Record<Complexity, string> = {
  hard: 'opus',
  medium: 'sonnet',
  easy: 'haiku',
};

export const TIER_ENV: Record<Complexity, string> = {
  hard: 'MAESTRO_MODEL_HARD',
  medium: 'MAESTRO_MODEL_MEDIUM',
  easy: 'MAESTRO_MODEL_EASY',
};

const ORDER: Complexity[] = ['hard', 'medium', 'easy'];

export function resolveTiers(env: NodeJS.ProcessEnv, overrides: Partial<Record<Complexity, string>> = {}): Record<Complexity, string> {
  const out = { ...DEFAULT_TIERS, ...overrides };
  for (const tier of ORDER) {
    const value = env[TIER_ENV[tier]]?.trim();
    if (value) out[tier] = value;
  }
  return out;
}

/**
 * The models to try for a tier: the tier's model, then the next weaker one.
 * Two entries at most: one retry per run. `easy` has nothing weaker, so it
 * retries on itself once.
 */
export function modelChain(tier: Complexity, tiers: Record<Complexity, string>): string[] {
  const i = ORDER.indexOf(tier);
  const first = tiers[tier];
  const next = tiers[ORDER[Math.min(i + 1, ORDER.length - 1)]!];
  return [first, next];
}
