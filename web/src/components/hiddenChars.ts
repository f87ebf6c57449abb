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
