/** What the knowledge tabs share: the daemon's "not available" answer, a load that follows its inputs, a link to an entry. */
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Maybe } from '../../api/knowledge.js';
import { href } from '../../stores/route.js';
import styles from '../Screens.module.css';

export function Unavailable() {
  const { t } = useTranslation();
  return (
    <p className={styles.unavailable} role="status" data-testid="knowledge-unavailable">
      {t('knowledge.unavailable')}
    </p>
  );
}

export function useLoad<T>(load: () => Promise<Maybe<T>>, deps: unknown[]): { result: Maybe<T> | null; error: string | null; reload(): void } {
  const [result, setResult] = useState<Maybe<T> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    setError(null);
    load().then(
      (r) => live && setResult(r),
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, n]);
  return { result, error, reload: () => setN((x) => x + 1) };
}

export const entryLink = (id: string) => <a href={href({ name: 'knowledge', view: 'entry', id })}>{id}</a>;
