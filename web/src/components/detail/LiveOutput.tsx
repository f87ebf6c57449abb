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

const isOutput = (c: Chunk) => c.kind !== 'replay.truncated';

/**
 * The chunks within MAX_CHARS: the oldest output goes first, never the newest chunk. A notice of what the replay
 * left out stays: it comes before a replay of up to 1 MiB of output, more than MAX_CHARS, which would drop it at once.
 */
function capped(chunks: Chunk[]): Chunk[] {
  let total = chunks.reduce((n, c) => n + c.text.length, 0);
  for (let i = chunks.findIndex(isOutput); total > MAX_CHARS && i >= 0 && i < chunks.length - 1; i = chunks.findIndex(isOutput)) {
    total -= chunks.splice(i, 1)[0]!.text.length;
  }
  return chunks;
}

function toChunk(item: StreamItem, t: (k: string, o?: Record<string, unknown>) => string): Chunk {
  switch (item.kind) {
    case 'token':
      return { id: item.id, kind: 'token', text: String(item.data.text ?? '') };
    case 'phase': {
      const d = item.data;
      return { id: item.id, kind: 'phase', text: `\n▸ ${String(d.stage ?? '')} ${String(d.state ?? '')}${typeof d.summary === 'string' ? ` · ${d.summary}` : ''}\n` };
    }
    case 'clarify':
      return { id: item.id, kind: 'clarify', text: `\n? ${String(item.data.question ?? '')}\n` };
    case 'result':
      return { id: item.id, kind: 'result', text: `\n✓ ${t('live.result')}\n` };
    case 'error':
      return { id: item.id, kind: 'error', text: `\n✗ ${String(item.data.code ?? '')} ${String(item.data.message ?? '')}\n` };
    case 'replay.truncated': {
      // The daemon replays at most 1 MiB of a task's outboxes: what it left out, of every run, said once where the output would be.
      const runs = item.data.runs.map((r) => r.runId);
      const said = runs.length > 1 ? t('live.truncatedRuns', { n: runs.length, runs: runs.join(', ') }) : t('live.truncated', { runId: item.data.runId });
      return { id: item.id, kind: 'replay.truncated', text: `\n… ${said}\n` };
    }
    default: {
      const never: never = item;
      return never;
    }
  }
}

const CHUNK_CLASS: Record<Chunk['kind'], string | undefined> = {
  token: undefined,
  phase: styles.phase,
  clarify: styles.clarify,
  result: undefined,
  error: styles.errorLine,
  'replay.truncated': styles.notice,
};

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
          return capped(next);
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
            <span key={c.id} className={CHUNK_CLASS[c.kind]}>
              {c.text}
            </span>
          ))
        )}
      </div>
    </section>
  );
}
