/**
 * Project scope of wiki entries (FORMATS §8.4, knowledge-scope): an entry is
 * usable in this project when it is global (`scope:global`, `scope:shared`,
 * `proj:global`), carries `proj:<slug>`, or carries no `proj:` tag but the
 * bare project slug (older entries). Writes add `proj:<slug>` unless global.
 */

export const GLOBAL_SCOPE_TAGS = ['scope:global', 'scope:shared', 'proj:global'] as const;

export type EntryScope = 'global' | 'current' | 'legacy-current' | 'other';

export function projectTag(slug: string): string {
  return `proj:${slug}`;
}

export function classifyScope(tags: readonly string[], slug: string): EntryScope {
  const lower = tags.map((t) => t.toLowerCase());
  if (lower.some((t) => (GLOBAL_SCOPE_TAGS as readonly string[]).includes(t))) return 'global';
  if (lower.includes(projectTag(slug))) return 'current';
  if (!lower.some((t) => t.startsWith('proj:')) && lower.includes(slug)) return 'legacy-current';
  return 'other';
}

export function isProjectCompatible(tags: readonly string[], slug: string): boolean {
  return classifyScope(tags, slug) !== 'other';
}

/** Adds the current project tag unless the entry is global or already tagged. */
export function ensureScopeTags(tags: readonly string[], slug: string): string[] {
  const scope = classifyScope(tags, slug);
  if (scope === 'global' || scope === 'current') return [...tags];
  return [...tags, projectTag(slug)];
}
