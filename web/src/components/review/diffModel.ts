/**
 * From the daemon's diff (GET /api/tasks/:id/diff, structured hunks) to what
 * react-diff-view draws (gitdiff-parser's hunk shape), plus the file tree and
 * where comments and findings sit. Pure functions: the viewer and its tests
 * share them.
 */
import type { ChangeData, HunkData } from 'react-diff-view';
import type { DiffFile, DiffHunk, Finding, LineComment } from '../../api/types.js';
import { hasHidden, visible } from '../hiddenChars.js';

/**
 * A line as drawn: a carriage return ending it as ␍, so a change of line endings does not read as two equal lines;
 * characters drawn as nothing or reordering the line as `\u{…}` (hiddenChars.ts), so it reads as it runs.
 */
const shown = (text: string) => (text.endsWith('\r') ? `${visible(text.slice(0, -1))}\u240d` : visible(text));

/** Whether the file's path or a line of its change holds such characters (FileDiff says so above it). */
export const holdsHidden = (file: DiffFile) => hasHidden(file.path) || hasHidden(file.oldPath ?? '') || file.hunks.some((h) => h.lines.some((l) => hasHidden(l.text.replace(/\r$/, ''))));

export function toHunks(hunks: DiffHunk[]): HunkData[] {
  return hunks.map((h) => ({
    content: h.header,
    oldStart: h.oldStart,
    oldLines: h.oldLines,
    newStart: h.newStart,
    newLines: h.newLines,
    changes: h.lines.map((l): ChangeData => {
      if (l.kind === 'add') return { type: 'insert', isInsert: true, content: shown(l.text), lineNumber: l.newLine ?? 0 };
      if (l.kind === 'del') return { type: 'delete', isDelete: true, content: shown(l.text), lineNumber: l.oldLine ?? 0 };
      return { type: 'normal', isNormal: true, content: shown(l.text), oldLineNumber: l.oldLine ?? 0, newLineNumber: l.newLine ?? 0 };
    }),
  }));
}

/** The key react-diff-view gives a line's widget row (getChangeKey: I/D + line, N + old line). */
export function changeKey(change: ChangeData): string {
  if (change.type === 'insert') return `I${change.lineNumber}`;
  if (change.type === 'delete') return `D${change.lineNumber}`;
  return `N${change.oldLineNumber}`;
}

/** The widget keys of the lines that end their side without a newline (a note goes under each). */
export function noNewlineKeys(hunks: DiffHunk[]): string[] {
  return hunks.flatMap((h) => h.lines.filter((l) => l.noNewline).map((l) => (l.kind === 'add' ? `I${l.newLine}` : l.kind === 'del' ? `D${l.oldLine}` : `N${l.oldLine}`)));
}

/** What a git mode is, as a key of `review.modeKind` (a regular file's 100644 is the default, said only beside another). */
export function modeKind(mode: string | null): string | null {
  return mode === null ? null : ({ '100644': 'file', '100755': 'executable', '120000': 'symlink', '160000': 'submodule' } as Record<string, string>)[mode] ?? 'other';
}

/** The line a comment on this change names: a deleted line by its old number, any other by its new one. */
export function lineOf(change: ChangeData): { line: number; side: 'new' | 'old' } {
  if (change.type === 'delete') return { line: change.lineNumber, side: 'old' };
  if (change.type === 'insert') return { line: change.lineNumber, side: 'new' };
  return { line: change.newLineNumber, side: 'new' };
}

/** The change a (side, line) points at, or null when the diff does not show that line. */
export function findChange(hunks: HunkData[], side: 'new' | 'old', line: number): ChangeData | null {
  for (const h of hunks) {
    for (const c of h.changes) {
      if (side === 'new' && ((c.type === 'insert' && c.lineNumber === line) || (c.type === 'normal' && c.newLineNumber === line))) return c;
      if (side === 'old' && ((c.type === 'delete' && c.lineNumber === line) || (c.type === 'normal' && c.oldLineNumber === line))) return c;
    }
  }
  return null;
}

export interface Pinned {
  comments: { comment: LineComment; index: number }[];
  findings: Finding[];
}

/**
 * Comments and findings of one file, keyed by the change they sit under.
 * Findings on a line the diff does not show (or with no line) come back in
 * `loose`, to be listed above the file rather than lost.
 */
export function pinToLines(path: string, hunks: HunkData[], comments: LineComment[], findings: Finding[]): { byKey: Map<string, Pinned>; loose: Finding[] } {
  const byKey = new Map<string, Pinned>();
  const at = (key: string) => {
    let p = byKey.get(key);
    if (!p) byKey.set(key, (p = { comments: [], findings: [] }));
    return p;
  };
  comments.forEach((comment, index) => {
    if (comment.file !== path) return;
    const change = findChange(hunks, comment.side, comment.line);
    if (change) at(changeKey(change)).comments.push({ comment, index });
  });
  const loose: Finding[] = [];
  for (const f of findings) {
    if (f.file !== path) continue;
    const change = f.line ? findChange(hunks, 'new', f.line) : null;
    if (change) at(changeKey(change)).findings.push(f);
    else loose.push(f);
  }
  return { byKey, loose };
}

const LANGUAGES: Record<string, string> = {
  ts: 'typescript', mts: 'typescript', cts: 'typescript', tsx: 'tsx', js: 'javascript', mjs: 'javascript', cjs: 'javascript', jsx: 'jsx',
  json: 'json', css: 'css', html: 'markup', xml: 'markup', svg: 'markup', md: 'markdown', py: 'python', go: 'go', rs: 'rust',
  sh: 'bash', bash: 'bash', yml: 'yaml', yaml: 'yaml', sql: 'sql', java: 'java', c: 'c', h: 'c', cpp: 'cpp', cc: 'cpp', hpp: 'cpp',
};

/** The highlighting language for a path, or null (shown plain). */
export function languageOf(path: string): string | null {
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  return path.includes('.') && Object.hasOwn(LANGUAGES, ext) ? LANGUAGES[ext]! : null; // not `constructor`, say
}

export interface TreeNode {
  name: string;
  /** Set on files: the file's index in the diff. */
  file?: number;
  children: TreeNode[];
}

/** The changed files as a folder tree, folders with one child folded into their parent ("src/api"). */
export function fileTree(files: Pick<DiffFile, 'path'>[]): TreeNode[] {
  const root: TreeNode = { name: '', children: [] };
  files.forEach((f, i) => {
    const parts = f.path.split('/');
    let node = root;
    for (const dir of parts.slice(0, -1)) {
      let next = node.children.find((c) => c.file === undefined && c.name === dir);
      if (!next) node.children.push((next = { name: dir, children: [] }));
      node = next;
    }
    node.children.push({ name: parts[parts.length - 1]!, file: i, children: [] });
  });
  const fold = (n: TreeNode): TreeNode => {
    let cur = n;
    while (cur.file === undefined && cur.children.length === 1 && cur.children[0]!.file === undefined) {
      const only = cur.children[0]!;
      cur = { name: cur.name ? `${cur.name}/${only.name}` : only.name, children: only.children };
    }
    return { ...cur, children: cur.children.map(fold) };
  };
  return fold(root).children;
}
