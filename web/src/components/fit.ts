/**
 * A width that shows a field's whole placeholder, in any of the five
 * languages: `ch` counts Latin characters, and CJK or full-width ones take two.
 * Capped by the container (max-width 100%), so a narrow screen still fits.
 */
import type { CSSProperties } from 'react';

const WIDE = /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/u;

export function textUnits(text: string): number {
  let n = 0;
  for (const ch of text) n += WIDE.test(ch) ? 2 : 1;
  return n;
}

/** Style for an input whose placeholder must not be cut off (the 36 px: padding, border and a search field's clear button). */
export function fitPlaceholder(placeholder: string, minCh = 12): CSSProperties {
  return { width: `calc(${Math.max(minCh, textUnits(placeholder))}ch + 36px)`, maxWidth: '100%' };
}
