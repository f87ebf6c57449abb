/** Contrast holds: every text colour of the theme against every surface it is drawn on meets WCAG AA (4.5:1). */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const css = readFileSync(join(import.meta.dirname, 'global.css'), 'utf8');
// Surfaces the modules paint themselves (the gate box, the live output…).
const moduleBackgrounds = (readdirSync(import.meta.dirname, { recursive: true }) as string[])
  .filter((f) => f.endsWith('.module.css'))
  .flatMap((f) => [...readFileSync(join(import.meta.dirname, f), 'utf8').matchAll(/background:\s*(#[0-9a-fA-F]{6})/g)].map((m) => m[1]!));
const vars = Object.fromEntries([...css.matchAll(/--([a-z0-9]+):\s*(#[0-9a-fA-F]{6})\s*;/g)].map((m) => [m[1]!, m[2]!]));

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}
const ratio = (a: string, b: string) => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
};

describe('theme contrast', () => {
  it('meets 4.5:1 for every text colour on every surface', () => {
    const texts = ['text', 'muted', 'accent', 'ok', 'warn', 'bad', 'focus'];
    const surfaces = ['bg', 'panel', 'panel2'];
    for (const v of [...texts, ...surfaces]) expect(vars[v], `--${v} is a #rrggbb colour in global.css`).toMatch(/^#/);
    expect(moduleBackgrounds.length).toBeGreaterThan(0);
    const backgrounds = [...surfaces.map((s) => [`--${s}`, vars[s]!] as const), ...moduleBackgrounds.map((hex) => [hex, hex] as const)];
    const failing = texts.flatMap((t) => backgrounds.map(([name, hex]) => ({ pair: `--${t} on ${name}`, r: ratio(vars[t]!, hex) }))).filter((p) => p.r < 4.5);
    expect(failing).toEqual([]);
  });
});
