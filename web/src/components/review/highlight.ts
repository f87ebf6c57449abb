/**
 * Syntax highlighting for the diff: refractor (Prism grammars producing a
 * tree, no HTML strings) with only the grammars a code review usually meets,
 * registered by hand: `refractor/all` would add ~150 KB gzip to the chunk.
 * Anything else is shown plain.
 */
import { tokenize, type HunkData, type HunkTokens } from 'react-diff-view';
import { refractor } from 'refractor/core';
import bash from 'refractor/bash';
import c from 'refractor/c';
import cpp from 'refractor/cpp';
import css from 'refractor/css';
import go from 'refractor/go';
import java from 'refractor/java';
import json from 'refractor/json';
import markdown from 'refractor/markdown';
import markup from 'refractor/markup';
import python from 'refractor/python';
import rust from 'refractor/rust';
import sql from 'refractor/sql';
import tsx from 'refractor/tsx';
import yaml from 'refractor/yaml';

for (const lang of [bash, c, cpp, css, go, java, json, markdown, markup, python, rust, sql, tsx, yaml]) refractor.register(lang);

/** react-diff-view 3 expects refractor 3's `highlight` (an array of nodes); refractor 5 returns a root. */
const adapter = {
  highlight: ((text: string, language: string) => refractor.highlight(text, language).children) as never,
};

/** Past this many lines a file is drawn plain: highlighting is the slowest part of a big diff. */
export const HIGHLIGHT_MAX_LINES = 3000;

export function tokensFor(hunks: HunkData[], language: string | null): HunkTokens | null {
  const lines = hunks.reduce((n, h) => n + h.changes.length, 0);
  if (!language || lines === 0 || lines > HIGHLIGHT_MAX_LINES || !refractor.registered(language)) return null;
  try {
    return tokenize(hunks, { highlight: true, refractor: adapter, language });
  } catch {
    // A grammar that chokes on odd text must not take the diff down: show it plain.
    return null;
  }
}
