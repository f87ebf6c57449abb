/**
 * Characters a screen draws as nothing, or that reorder the text around them (control, zero-width and
 * bidirectional ones): in an agent's change they could make code read otherwise than it runs ("Trojan Source",
 * CVE-2021-42574), and in knowledge a promote writes, hide what it says. Shown as `\u{…}` wherever a person
 * approves what they read, and in the names and titles the board shows (a project named "x\u202eder" read
 * "xred" in the sidebar), as the CLI shows them. Tab and newline are text.
 */
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/;

/** The same, for replace (which starts a global one from the beginning each time). */
const EACH_HIDDEN = new RegExp(HIDDEN, 'g');

export function visible(text: string): string {
  return text.replace(EACH_HIDDEN, (ch) => `\\u{${ch.codePointAt(0)!.toString(16)}}`);
}

export function hasHidden(text: string): boolean {
  return HIDDEN.test(text);
}

/**
 * `visible`, and a line break, a tab or a line separator shown too: a name (a file's) drawn on one line, as the CLI
 * draws it (src/lib/visible.ts oneLine). In a <pre> (a command to copy) a line break in a file name started a line of
 * its own; elsewhere the page drew it as a space, a name other than the file's.
 */
export function oneLine(text: string): string {
  return visible(text).replace(/[\n\t\u2028\u2029]/g, (ch) => `\\u{${ch.codePointAt(0)!.toString(16)}}`);
}
