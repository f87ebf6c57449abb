/** The transcript, searched on the server (it may be far too long to ship whole), with the last lines on request. */
import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { fitPlaceholder } from '../fit.js';
import { errorText } from '../reasons.js';
import { api } from '../../api/client.js';
import type { Run, TranscriptSearch } from '../../api/types.js';
import styles from './Detail.module.css';

/** A transcript line is JSON ({at, stage, role, text}); shown as "role · stage: text", or raw when it is not. */
export function formatLine(line: string): string {
  try {
    const e = JSON.parse(line) as { role?: unknown; stage?: unknown; text?: unknown };
    if (typeof e.text === 'string') return `${String(e.role ?? '?')} · ${String(e.stage ?? '')}: ${e.text}`;
  } catch {
    /* raw below */
  }
  return line;
}

export function Transcript({ taskId, runs }: { taskId: string; runs: Run[] }) {
  const { t, i18n } = useTranslation();
  const [q, setQ] = useState('');
  const [runId, setRunId] = useState('');
  const [result, setResult] = useState<TranscriptSearch | null>(null);
  const [tail, setTail] = useState<{ lines: string[]; total: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const search = async (e: FormEvent) => {
    e.preventDefault();
    if (!q.trim()) return;
    setBusy(true);
    setError(null);
    try {
      setResult(await api.searchTranscript(taskId, q.trim(), runId || undefined));
    } catch (err) {
      setError(errorText(t, i18n.language, err));
    } finally {
      setBusy(false);
    }
  };
  const showTail = async () => {
    setError(null);
    try {
      setTail(await api.transcript(taskId, runId || undefined, 300));
    } catch (err) {
      setError(errorText(t, i18n.language, err));
    }
  };

  return (
    <section className={styles.section} aria-labelledby="transcript-h">
      <h3 id="transcript-h">{t('transcript.title')}</h3>
      <form className={styles.row} onSubmit={(e) => void search(e)} role="search">
        <input type="search" aria-label={t('transcript.search')} placeholder={t('transcript.search')} style={fitPlaceholder(t('transcript.search'))} value={q} onChange={(e) => setQ(e.target.value)} maxLength={500} />
        <select aria-label={t('transcript.run')} value={runId} onChange={(e) => setRunId(e.target.value)}>
          <option value="">{t('transcript.latestRun')}</option>
          {runs.map((r) => (
            <option key={r.id} value={r.id}>
              {t(`runKind.${r.kind}`)} · {r.id.slice(0, 8)}
            </option>
          ))}
        </select>
        <button type="submit" disabled={busy || !q.trim()}>
          {t('transcript.go')}
        </button>
        <button type="button" onClick={() => void showTail()}>
          {t('transcript.tail')}
        </button>
      </form>
      {error && <p role="alert" className={styles.err}>{error}</p>}
      {result && (
        <div className={styles.matches} data-testid="transcript-matches">
          <p className={styles.muted} role="status">{t('transcript.matches', { count: result.matches.length })}</p>
          <table>
            <tbody>
              {result.matches.map((m) => (
                <tr key={m.line}>
                  <td className={styles.lineNo}>{m.line}</td>
                  <td>
                    <pre>{formatLine(m.text)}</pre>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {tail && (
        <div className={styles.matches}>
          <p className={styles.muted}>{t('transcript.tailOf', { shown: tail.lines.length, total: tail.total })}</p>
          <pre>{tail.lines.map(formatLine).join('\n')}</pre>
        </div>
      )}
    </section>
  );
}
