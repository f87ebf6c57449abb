/**
 * Control and invisible characters shown as `\u{1b}`, `\u{d}`, …: a terminal would run them (an escape sequence can
 * hide the rest of a line, a carriage return overwrite it), so the person would not read the text as it is. The
 * CLI's output and the observer's terminal UI show what agents, repositories and transcripts wrote. Line breaks
 * and tabs stay. The same set as the board's (web/src/components/hiddenChars.ts).
 */
export function visible(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g, (ch) => `\\u{${ch.codePointAt(0)!.toString(16)}}`);
}
