/**
 * Control and invisible characters shown as `\u{1b}`, `\u{d}`, …: a terminal would run them (an escape sequence can
 * hide the rest of a line, a carriage return overwrite it), so the person would not read the text as it is. The
 * CLI's output and the observer's terminal UI show what agents, repositories and transcripts wrote. Line breaks
 * and tabs stay. The same set as the board's (web/src/components/hiddenChars.ts).
 */
export function visible(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g, (ch) => `\\u{${ch.codePointAt(0)!.toString(16)}}`);
}

/**
 * A line break or a tab, shown as `\u{a}` and `\u{9}` where text must stay on one line; and the line and paragraph
 * separators, which a browser may draw as a line break (the schemas refuse them in a title for that).
 */
const BREAK = /[\n\t\u2028\u2029]/g;

/**
 * `visible`, and line breaks and tabs shown too: a name (a file's, a branch's, a title) is one line always. git
 * allows a line break in a file name, and `docs.md  +1 -0\n1 file changed, …` printed a summary line of its own
 * under `task diff --stat`, reading as Maestro's.
 */
export function oneLine(text: string): string {
  return visible(text).replace(BREAK, (ch) => `\\u{${ch.codePointAt(0)!.toString(16)}}`);
}

/**
 * Text that may run over lines (a reviewer's finding, an error, a question), `visible`, with every line after the
 * first starting with `indent`: it stays inside the item it belongs to, and no line of it starts where Maestro's own
 * lines do. A model's finding often spans lines (a suggested fix, a list), so its lines are kept, not escaped. A
 * CRLF line end is a line end; line breaks at the end are dropped (they would leave lines of indent alone).
 */
export function hangingIndent(text: string, indent: string): string {
  return visible(text.replace(/\r\n/g, '\n').replace(/\n+$/, ''))
    .split('\n')
    .map((line, i) => (i === 0 || !line ? line : `${indent}${line}`))
    .join('\n');
}

/**
 * A colour or style sequence (SGR: ESC [ parameters m). It moves nothing, but it can hide text all the same:
 * conceal (8), a colour the same as the terminal's background (30 on a dark one, 38;2;r;g;b on any), a theme's
 * "bright black" that is its background (Solarized's), or paint an agent's line as Maestro paints its own.
 */
const SGR = /\u001b\[[0-9;:]*m/g;

/**
 * `visible`, with colour and style sequences left out: an agent's log reads as plain text, all of it. No subset of
 * colours is safe, since which of them the person can read depends on their terminal's theme; and showing them as
 * `\u{1b}[32m` buried a test run's output (tools that colour it for a terminal) under escapes. Every other
 * sequence is shown, not run: a cursor move or a carriage return that writes over lines already printed, a window
 * title, a clipboard write (OSC 52), a link whose target is not its text.
 */
export function visibleWithoutColours(text: string): string {
  return visible(text.replace(SGR, ''));
}
