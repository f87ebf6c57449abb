/**
 * What a refusal of unknown keys in a settings file adds to zod's `Unrecognized key: "x"`: the known key each
 * misspelt one is nearest to, and the keys the object at that place takes. A config with `maxConcurentRuns`
 * (or `.maestro/config.json`'s `limits.maxDifLines`) was refused with the whole list of top-level keys, or no
 * list at all for a nested object, and a person compared names by eye.
 */
import type { z } from 'zod';
import { editDistance } from './editDistance.js';

/** The keys the object schema at `path` takes (through optional, default, nullable, pipes and unions); [] where none. */
export function keysAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): string[] {
  const def = schema._zod.def as unknown as Record<string, unknown> & { type: string };
  switch (def.type) {
    case 'object': {
      const shape = def.shape as Record<string, z.core.$ZodType>;
      if (!path.length) return Object.keys(shape);
      const next = shape[String(path[0])];
      return next ? keysAt(next, path.slice(1)) : [];
    }
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
      return keysAt(def.innerType as z.core.$ZodType, path);
    case 'pipe':
      return keysAt(def.in as z.core.$ZodType, path);
    case 'array':
      return path.length ? keysAt(def.element as z.core.$ZodType, path.slice(1)) : [];
    case 'union':
      return [...new Set((def.options as z.core.$ZodType[]).flatMap((o) => keysAt(o, path)))];
    default:
      return [];
  }
}

/** The known key `key` is a likely misspelling of: at most 2 edits away (a third of a long name), case aside; else null. */
export function nearestKey(key: string, known: readonly string[]): string | null {
  let best: { name: string; d: number } | null = null;
  for (const name of known) {
    const d = editDistance(key.toLowerCase(), name.toLowerCase());
    if (d <= Math.max(2, Math.floor(name.length / 3)) && (!best || d < best.d)) best = { name, d };
  }
  return best?.name ?? null;
}

/**
 * ` (did you mean port? it takes name, host, port)` after zod's message: the nearest known key of each unknown one
 * that has one, then (`list`) the keys there are. Empty when there is nothing to add.
 */
export function unknownKeysNote(unknown: readonly string[], known: readonly string[], list = true): string {
  const meant = unknown.flatMap((k) => {
    const near = nearestKey(k, known);
    return near ? [unknown.length > 1 ? `${near} for ${k}` : near] : [];
  });
  const parts = [...(meant.length ? [`did you mean ${meant.join(', ')}?`] : []), ...(list && known.length ? [`it takes ${known.join(', ')}`] : [])];
  return parts.length ? ` (${parts.join(' ')})` : '';
}

/** The note for one zod issue of a settings schema: `unknownKeysNote` for unrecognized keys, '' for any other. */
export function unknownKeysIssueNote(schema: z.core.$ZodType, issue: z.core.$ZodIssue, list = true): string {
  return issue.code === 'unrecognized_keys' ? unknownKeysNote(issue.keys, keysAt(schema, issue.path), list) : '';
}
