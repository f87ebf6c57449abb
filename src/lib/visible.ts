/**
 * Control and invisible characters shown as `\u{1b}`, `\u{d}`, …: a terminal would run them (an escape sequence can
 * hide the rest of a line, a carriage return overwrite it), so the person would not read the text as it is. The
 * CLI's output and the observer's terminal UI show what agents, repositories and transcripts wrote. Line breaks
 * and tabs stay. The same set as the board's (web/src/components/hiddenChars.ts).
 */
export function visible(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g, (ch) => `\\u{${ch.codePointAt(0)!.toString(16)}}`);
}

/** A colour or style sequence (SGR: ESC [ parameters m): it changes how text looks, never where it goes or what the terminal does. */
const SGR = /(\u001b\[[0-9;:]*m)/;

/**
 * `visible`, with colour and style sequences kept: an agent's log reads in the colours its tools gave it. Every other
 * sequence is shown, not run: a cursor move or a carriage return that writes over lines already printed, a
 * window title, a clipboard write (OSC 52), a link whose target is not its text.
 */
export function visibleKeepingColours(text: string): string {
  return text
    .split(SGR)
    .map((part, i) => (i % 2 === 1 ? part : visible(part)))
    .join('');
}
