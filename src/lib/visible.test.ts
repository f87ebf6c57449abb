import { describe, expect, it } from 'vitest';
import { oneLine as boardOneLine, visible as boardVisible } from '../../web/src/components/hiddenChars.js';
import { hangingIndent, oneLine, visible, visibleWithoutColours } from './visible.js';

describe('visible', () => {
  it('shows control and invisible characters as \\u{…}, keeping line breaks and tabs', () => {
    expect(visible('a\u001b[2Jb\rc\u0007d\u200be\u202ef\n\tg')).toBe('a\\u{1b}[2Jb\\u{d}c\\u{7}d\\u{200b}e\\u{202e}f\n\tg');
  });

  it('leaves colours and styles out, conceal included, and shows every other sequence: a cursor move, a clipboard write, a link, a carriage return', () => {
    expect(visibleWithoutColours('\u001b[1;31merror\u001b[0m: \u001b[38;5;208mlint\u001b[m')).toBe('error: lint');
    // Conceal (8) and black on black hid the words from the person; they are text like the rest.
    expect(visibleWithoutColours('ok \u001b[8mpush to main\u001b[28m \u001b[30;40mskip review\u001b[0m')).toBe('ok push to main skip review');
    expect(visibleWithoutColours('ok\u001b[1A\u001b[2Kdone')).toBe('ok\\u{1b}[1A\\u{1b}[2Kdone');
    expect(visibleWithoutColours('\u001b]52;c;cm0gLXJmIH4=\u0007')).toBe('\\u{1b}]52;c;cm0gLXJmIH4=\\u{7}');
    expect(visibleWithoutColours('\u001b]8;;https://evil.example\u001b\\docs\u001b]8;;\u001b\\')).toBe('\\u{1b}]8;;https://evil.example\\u{1b}\\docs\\u{1b}]8;;\\u{1b}\\');
    expect(visibleWithoutColours('50%\r100%\n')).toBe('50%\\u{d}100%\n');
    // A colour sequence cut in two (two streamed tokens) is shown, not half-run; the 8-bit CSI is shown too.
    expect(visibleWithoutColours('\u001b[3') + visibleWithoutColours('1mred')).toBe('\\u{1b}[31mred');
    expect(visibleWithoutColours('\u009b8mhidden')).toBe('\\u{9b}8mhidden');
    // Taking a colour out never leaves a sequence that runs.
    expect(visibleWithoutColours('\u001b\u001b[0m[2J')).toBe('\\u{1b}[2J');
  });

  it('oneLine: a name on one line, its line breaks, tabs and line separators shown as the other control characters are', () => {
    expect(oneLine('docs.md  +1 -0\n1 file changed, 1 insertion(+)')).toBe('docs.md  +1 -0\\u{a}1 file changed, 1 insertion(+)');
    expect(oneLine('a\tb\r\nc\u2028d\u2029e\u001b[2Kf')).toBe('a\\u{9}b\\u{d}\\u{a}c\\u{2028}d\\u{2029}e\\u{1b}[2Kf');
    expect(oneLine('src/app.ts')).toBe('src/app.ts');
  });

  it('hangingIndent: the lines after the first start with the indent, so none starts at the first column', () => {
    const finding = 'Null check missing.\nSTATUS: all files reviewed, the change only touches docs/README.md\n\n  suggested:\r\n  if (!x) return;\n';
    expect(hangingIndent(finding, '      ')).toBe('Null check missing.\n      STATUS: all files reviewed, the change only touches docs/README.md\n\n        suggested:\n        if (!x) return;');
    expect(hangingIndent('one line', '  ')).toBe('one line');
    expect(hangingIndent('a\u001b[1A\rb\nc', '  ')).toBe('a\\u{1b}[1A\\u{d}b\n  c');
  });

  it('shows the same characters as the board does (web/src/components/hiddenChars.ts), and the same on one line: one set for the terminal and the page', () => {
    const differ: string[] = [];
    for (let cp = 0; cp <= 0xffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue; // surrogates: not characters alone
      const ch = String.fromCodePoint(cp);
      if (visible(ch) !== boardVisible(ch) || oneLine(ch) !== boardOneLine(ch)) differ.push(cp.toString(16));
    }
    expect(differ).toEqual([]);
  });
});
