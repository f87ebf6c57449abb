/**
 * Doc comments for the code graph's search text (issue 16 item 4: "code
 * search reads doc comments"). Read from the source text, the same way for
 * every language: the comment block right above a symbol (`/** … *\/`, `//`,
 * `///`, `#`, `--`), past decorators and attributes (`@x`, `#[x]`), and a
 * Python docstring right below a `def`/`class` line. A file's doc is its
 * leading comment block (after a shebang). Markers are stripped; at most
 * MAX_DOC_CHARS are kept, so a licence header cannot flood the index.
 */

export const MAX_DOC_CHARS = 1000;
const MAX_LINES = 60;

const COMMENT = /^\s*(\/\/\/?|\/\*\*?|\*\/|\*|#(?!\[)|--)/;
const ATTRIBUTE = /^\s*(@[\w.]+|#\[)/;

function strip(line: string): string {
  return line
    .replace(/^\s*(\/\/\/?!?|\/\*\*?|\*\/|\*|#+|--)\s?/, '')
    .replace(/\*\/\s*$/, '')
    .trim();
}

function clip(parts: string[]): string {
  return parts.filter(Boolean).join(' ').replace(/\s+/g, ' ').trim().slice(0, MAX_DOC_CHARS);
}

/** The doc of the symbol declared on 1-based `line` of `lines`. */
export function docAt(lines: readonly string[], line: number): string {
  const above: string[] = [];
  let i = line - 2;
  while (i >= 0 && ATTRIBUTE.test(lines[i]!) && line - 2 - i < MAX_LINES) i--;
  for (; i >= 0 && line - 2 - i < MAX_LINES && COMMENT.test(lines[i]!); i--) above.unshift(strip(lines[i]!));
  return clip([...above, pythonDocstring(lines, line)]);
}

/** A `"""…"""` / `'''…'''` string opening the body of the `def`/`class` on `line` (a multi-line header is followed to its colon). */
function pythonDocstring(lines: readonly string[], line: number): string {
  if (!/^\s*(async\s+def|def|class)\b/.test(lines[line - 1] ?? '')) return '';
  let i = line - 1;
  while (i < lines.length && i - line < 20 && !/:\s*(#.*)?$/.test(lines[i]!)) i++;
  i++;
  while (i < lines.length && !lines[i]!.trim()) i++;
  return tripleQuoted(lines, i);
}

/** The file's leading comment block (after a shebang and blank lines). */
export function fileDoc(lines: readonly string[]): string {
  let i = 0;
  if (lines[0]?.startsWith('#!')) i++;
  while (i < lines.length && !lines[i]!.trim()) i++;
  const out: string[] = [];
  for (let n = 0; i < lines.length && n < MAX_LINES && COMMENT.test(lines[i]!); i++, n++) out.push(strip(lines[i]!));
  if (!out.length) return tripleQuoted(lines, i);
  return clip(out);
}

/** The text of a `"""…"""` / `'''…'''` string starting on line index `at`, or ''. */
function tripleQuoted(lines: readonly string[], at: number): string {
  const first = lines[at]?.trim() ?? '';
  const q = first.match(/^[rRbBuU]?("""|''')/)?.[1];
  if (!q) return '';
  const out: string[] = [];
  let rest = first.slice(first.indexOf(q) + 3);
  for (let i = at, n = 0; n < MAX_LINES; n++) {
    const end = rest.indexOf(q);
    if (end !== -1) {
      out.push(rest.slice(0, end));
      break;
    }
    out.push(rest);
    if (++i >= lines.length) break;
    rest = lines[i]!;
  }
  return clip(out);
}
