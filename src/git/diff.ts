/**
 * What a task branch changed relative to its base: files, lines, and the files
 * that fall outside the task's ownedFiles (the diff gate's inputs).
 */
import { git } from './git.js';

export interface DiffStats {
  files: string[];
  filesChanged: number;
  linesAdded: number;
  linesDeleted: number;
  /** Files changed that no ownedFiles pattern covers (empty when ownedFiles is empty: nothing declared, nothing to police). */
  outsideOwned: string[];
}

/**
 * ownedFiles patterns: an exact path, a folder ending in "/", or a glob where
 * `*` matches within one path segment and `**` across segments.
 */
export function ownedMatcher(patterns: string[]): (file: string) => boolean {
  const tests = patterns.map((p) => {
    const pattern = p.replace(/^\.\//, '');
    if (pattern.endsWith('/')) return (f: string) => f.startsWith(pattern);
    if (!/[*?]/.test(pattern)) return (f: string) => f === pattern || f.startsWith(pattern + '/');
    let re = '';
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern[i]!;
      if (c === '*' && pattern[i + 1] === '*') {
        re += pattern[i + 2] === '/' ? '(?:.*/)?' : '.*';
        i += pattern[i + 2] === '/' ? 2 : 1;
      } else if (c === '*') re += '[^/]*';
      else if (c === '?') re += '[^/]';
      else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
    const rx = new RegExp(`^${re}$`);
    return (f: string) => rx.test(f);
  });
  return (file) => tests.some((t) => t(file));
}

/** Changes from the merge-base of `base` and `head` to `head` (what merging head would bring). */
export async function diffStats(cwd: string, base: string, head: string, ownedFiles: string[]): Promise<DiffStats> {
  const { stdout } = await git(cwd, ['diff', '--numstat', '-z', '--no-renames', `${base}...${head}`]);
  const files: string[] = [];
  let linesAdded = 0;
  let linesDeleted = 0;
  // -z: "added\tdeleted\tpath\0"; binary files show "-" for both counts.
  for (const entry of stdout.split('\0')) {
    const m = /^(\d+|-)\t(\d+|-)\t(.+)$/s.exec(entry);
    if (!m) continue;
    files.push(m[3]!);
    if (m[1] !== '-') linesAdded += Number(m[1]);
    if (m[2] !== '-') linesDeleted += Number(m[2]);
  }
  const owned = ownedMatcher(ownedFiles);
  const outsideOwned = ownedFiles.length ? files.filter((f) => !owned(f)) : [];
  return { files, filesChanged: files.length, linesAdded, linesDeleted, outsideOwned };
}

export async function diffText(cwd: string, base: string, head: string, maxChars = 60_000): Promise<string> {
  const { stdout } = await git(cwd, ['diff', '--no-color', `${base}...${head}`]);
  return stdout.length > maxChars ? `${stdout.slice(0, maxChars)}\n[diff cut at ${maxChars} characters]` : stdout;
}
