/**
 * The agent's live output over SSE. Auto-scrolls while the reader is at the
 * bottom; scrolling up pauses it. The buffer is capped so a very long run
 * cannot exhaust the page. Text is rendered as text, never as HTML.
 */
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { openTaskStream } from '../../api/stream.js';
import type { StreamItem } from '../../api/types.js';
import styles from './Detail.module.css';

const MAX_CHARS = 200_000;

interface Chunk {
  id: string;
  kind: StreamItem['kind'];
  text: string;
}

function toChunk(item: StreamItem, t: (k: string, o?: Record<string, unknown>) => string): Chunk {
  const d = item.data;
  switch (item.kind) {
    case 'token':
      return { id: item.id, kind: 'token', text: String(d.text ?? '') };
    case 'phase':
      return { id: item.id, kind: 'phase', text: `\n▸ ${String(d.stage ?? '')} ${String(d.state ?? '')}${typeof d.summary === 'string' ? ` · ${d.summary}` : ''}\n` };
    case 'clarify':
      return { id: item.id, kind: 'clarify', text: `\n? ${String(d.question ?? '')}\n` };
    case 'result':
      return { id: item.id, kind: 'result', text: `\n✓ ${t('live.result')}\n` };
    default:
      return { id: item.id, kind: 'error', text: `\n✗ ${String(d.code ?? '')} ${String(d.message ?? '')}\n` };
  }
}

/** `running`: a run of this task is in progress; only then is the output called live. */
export function LiveOutput({ taskId, running }: { taskId: string; running: boolean }) {
  const { t } = useTranslation();
  const [chunks, setChunks] = useState<Chunk[]>([]);
  const [state, setState] = useState<'open' | 'reconnecting' | 'connecting'>('connecting');
  const box = useRef<HTMLDivElement>(null);
  const follow = useRef(true);
  const tRef = useRef(t);
  tRef.current = t;

  useEffect(() => {
    setChunks([]);
    const stream = openTaskStream(taskId, {
      onItem: (item) =>
        setChunks((prev) => {
          const next = [...prev, toChunk(item, tRef.current)];
          let total = next.reduce((n, c) => n + c.text.length, 0);
          while (total > MAX_CHARS && next.length > 1) total -= next.shift()!.text.length;
          return next;
        }),
      onState: setState,
    });
    return () => stream.close();
  }, [taskId]);

  useEffect(() => {
    const el = box.current;
    if (el && follow.current) el.scrollTop = el.scrollHeight;
  }, [chunks]);

  return (
    <section className={styles.section} aria-labelledby="live-h">
      <h3 id="live-h">
        {t('live.title')} <span className={running && state === 'open' ? styles.ok : styles.muted}>({running ? t(`live.${state}`) : t('live.idle')})</span>
      </h3>
      <div
        ref={box}
        className={styles.output}
        data-testid="live-output"
        role="log"
        aria-live="off"
        tabIndex={0}
        aria-label={t('live.title')}
        onScroll={(e) => {
          const el = e.currentTarget;
          follow.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
        }}
      >
        {chunks.length === 0 ? (
          <span className={styles.muted}>{t('live.empty')}</span>
        ) : (
          chunks.map((c) => (
            <span key={c.id} className={c.kind === 'phase' ? styles.phase : c.kind === 'clarify' ? styles.clarify : c.kind === 'error' ? styles.errorLine : undefined}>
              {c.text}
            </span>
          ))
        )}
      </div>
    </section>
  );
}
