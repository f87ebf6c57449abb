import { render, screen } from '@testing-library/react';
import { useTranslation } from 'react-i18next';
import { describe, expect, it } from 'vitest';
import { en } from './en.js';
import { es } from './es.js';
import { fr } from './fr.js';
import i18n, { setLanguage } from './index.js';
import { ja } from './ja.js';
import { zh } from './zh.js';

function leaves(o: object, prefix = ''): [string, string][] {
  return Object.entries(o).flatMap(([k, v]) => (typeof v === 'string' ? [[`${prefix}${k}`, v] as [string, string]] : leaves(v as object, `${prefix}${k}.`)));
}

describe('i18n', () => {
  it('translates every key in every language, keeping the placeholders and the tags <Trans> fills', () => {
    const ref = leaves(en);
    for (const [name, dict] of Object.entries({ zh, es, ja, fr })) {
      const got = new Map(leaves(dict));
      expect([...got.keys()].sort(), name).toEqual(ref.map(([k]) => k).sort());
      for (const [k, v] of ref) {
        const placeholders = (s: string) => [...s.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]).sort();
        expect(placeholders(got.get(k)!), `${name} ${k}`).toEqual(placeholders(v));
        // `<key/>`, `<branch/>`…: where a command or a name goes (DiffGatePanel); a translation without it drops it.
        const tags = (s: string) => [...s.matchAll(/<\/?\w+\/?>/g)].map((m) => m[0]).sort();
        expect(tags(got.get(k)!), `${name} ${k}`).toEqual(tags(v));
        expect(got.get(k)!.trim().length, `${name} ${k}`).toBeGreaterThan(0);
      }
    }
  });

  it('switches language and remembers the choice', async () => {
    function Probe() {
      const { t } = useTranslation();
      return <span>{t('nav.board')}</span>;
    }
    render(<Probe />);
    expect(screen.getByText('Board')).toBeTruthy();
    setLanguage('ja');
    expect(await screen.findByText('ボード')).toBeTruthy();
    expect(localStorage.getItem('maestro.lang')).toBe('ja');
    expect(document.documentElement.lang).toBe('ja');
    await i18n.changeLanguage('en');
  });
});
