import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';

/**
 * Why a knowhow `codePaths` / `relatedPaths` reference is a ghost, or null.
 * Forms: `path`, `path:12` / `path#L12` (line anchors: the file must exist),
 * `path#Symbol` / `path::Symbol` / `path:Symbol` (the file must exist and name
 * the symbol as a whole word). Only references inside the project are
 * checked; URLs and globs are not.
 */
export function ghostReference(projectDir: string, ref: string): string | null {
  const r = ref.trim();
  if (!r || /^[a-z][a-z0-9+.-]*:\/\//i.test(r) || /[*?[\]{}]/.test(r)) return null;
  const m = /^(.*?)(?:(?:#|::?)(.+))?$/.exec(r)!;
  let path = m[1]!;
  let anchor = m[2]?.trim() ?? '';
  if (!path) return null;
  if (/^L?\d+(?:-L?\d+)?$/.test(anchor)) anchor = '';
  const abs = isAbsolute(path) ? path : resolve(projectDir, path);
  const inside = relative(projectDir, abs);
  if (inside.startsWith('..') || isAbsolute(inside)) return null;
  path = inside || '.';
  if (!existsSync(abs)) return `references ${path}, which does not exist`;
  if (!anchor) return null;
  anchor = anchor.split('.').pop()!; // `Class.method` → method
  let text: string;
  try {
    text = readFileSync(abs, 'utf8');
  } catch {
    return null; // a directory or unreadable: the path exists, the symbol cannot be checked
  }
  const word = new RegExp(`(^|[^\\p{L}\\p{N}_$])${anchor.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\p{L}\\p{N}_$])`, 'u');
  return word.test(text) ? null : `references ${anchor} in ${path}, which no longer names it`;
}
