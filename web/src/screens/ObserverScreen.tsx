/**
 * Observer: the session list, and a session as exploration cards (KNOWLEDGE,
 * SUMMARY, wiki badge) with its flow graph. Live: an observer update on the
 * WebSocket reloads the list, and the open session when it is the one updated.
 */
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { clipOutsideMarkers } from '../../../src/core/redact.js';
import { observer, type ExplorationView, type FlowGraph, type ObserverSessionResponse, type Proposal, type SessionSummary } from '../api/observer.js';
import { useObserverFeed } from '../stores/observer.js';
import { href } from '../stores/route.js';
import styles from './Screens.module.css';

function Card({ e }: { e: ExplorationView }) {
  const { t } = useTranslation();
  return (
    <article className={styles.card} aria-label={e.question}>
      <p>
        <strong>{e.question || e.id}</strong> <span className={styles.badge}>{t(`observer.status.${e.status}`)}</span>
        {e.wiki && (
          <span className={styles.badge} title={e.wiki.reason ?? e.wiki.targetPath}>
            {e.wiki.proposalId ? t('observer.proposed', { target: e.wiki.targetId ?? '?' }) : t('observer.wiki', { status: e.wiki.status })}
          </span>
        )}
      </p>
      <p className={styles.muted}>
        {t('observer.tools', { count: e.toolCount })} · {t('observer.errors', { count: e.errorCount })}
        {e.durationMs !== null ? ` · ${(e.durationMs / 1000).toFixed(1)} s` : ''} {e.toolSummary}
      </p>
      {(e.subagents?.length ?? 0) > 0 && (
        <ul aria-label={t('observer.subagent', { prompt: '' })}>
          {e.subagents.map((s, i) => (
            <li key={i} className={styles.muted}>
              {t('observer.subagent', { prompt: s.prompt })} · {t('observer.subagentTools', { count: s.toolCount })} {s.toolSummary ?? ''}
            </li>
          ))}
        </ul>
      )}
      <h3>{t('observer.knowledge')}</h3>
      {e.knowledge === undefined ? <p className={styles.muted}>{t('observer.notSearched')}</p> : e.knowledge === null ? <p className={styles.muted}>{t('observer.noKnowledge')}</p> : (
        <p>
          <code>{e.knowledge.relativePath}</code> ({e.knowledge.score.toFixed(2)}) — {e.knowledge.excerpt}
        </p>
      )}
      <h3>{t('observer.summary')}</h3>
      {e.summary ? <p>{e.summary.text} <span className={styles.badge}>{e.summary.source}</span></p> : <p className={styles.muted}>{t('observer.noSummary')}</p>}
    </article>
  );
}

/** Curation proposals waiting for a person: what would be added to which entry, with accept and dismiss. */
function Proposals({ proposals, onDecided }: { proposals: Proposal[]; onDecided: (message: string) => void }) {
  const { t } = useTranslation();
  const [busy, setBusy] = useState<string | null>(null);
  const decide = (p: Proposal, decision: 'accept' | 'dismiss') => {
    setBusy(p.id);
    observer.decide(p.id, decision).then(
      () => onDecided(t(decision === 'accept' ? 'observer.accepted' : 'observer.dismissed', { target: p.targetId })),
      (e: Error) => onDecided(e.message),
    ).finally(() => setBusy(null));
  };
  return (
    <section aria-label={t('observer.proposals')}>
      <h3>{t('observer.proposals')}</h3>
      {proposals.length === 0 ? <p className={styles.muted}>{t('observer.noProposals')}</p> : <p className={styles.muted}>{t('observer.proposalHint')}</p>}
      {proposals.map((p) => (
        <article key={p.id} className={styles.card} aria-label={t('observer.proposalFor', { target: p.targetId, reason: p.reason })}>
          <p><strong>{t('observer.proposalFor', { target: p.targetId, reason: p.reason })}</strong> <code>{p.targetPath}</code></p>
          <ul>{p.newFacts.map((f, i) => <li key={i}>{f}</li>)}</ul>
          <button type="button" disabled={busy === p.id} onClick={() => decide(p, 'accept')}>{t('observer.accept')}</button>{' '}
          <button type="button" disabled={busy === p.id} onClick={() => decide(p, 'dismiss')}>{t('observer.dismiss')}</button>
        </article>
      ))}
    </section>
  );
}

function Flow({ flow }: { flow: FlowGraph }) {
  const { t } = useTranslation();
  const W = 170, H = 30, G = 14;
  const pos = new Map(flow.nodes.map((n, i) => [n.id, { x: 10 + (i % 4) * (W + G), y: 10 + Math.floor(i / 4) * (H + G * 2) }]));
  const rows = Math.ceil(flow.nodes.length / 4);
  return (
    <svg role="img" aria-label={t('observer.flow')} width="100%" viewBox={`0 0 ${4 * (W + G) + 20} ${rows * (H + 2 * G) + 20}`}>
      {flow.edges.map((e, i) => {
        const a = pos.get(e.from), b = pos.get(e.to);
        return a && b ? <line key={i} x1={a.x + W / 2} y1={a.y + H} x2={b.x + W / 2} y2={b.y} stroke={e.relationship === 'repair' ? '#ff9b9b' : '#7cc4ff'} /> : null;
      })}
      {flow.nodes.map((n) => {
        const p = pos.get(n.id)!;
        return (
          <g key={n.id} transform={`translate(${p.x},${p.y})`}>
            <rect width={W} height={H} rx={4} fill={n.id === flow.focusNodeId ? '#2b3a48' : '#222930'} stroke="#36404a" />
            <text x={6} y={19} fill="#e8ecef" fontSize={11}>{clipOutsideMarkers(n.label, 24)}</text>
          </g>
        );
      })}
    </svg>
  );
}

/**
 * The sessions, the open session and the open proposals, loaded at once and again, debounced, on observer
 * updates; `decided` says a proposal's outcome and loads what it changed.
 */
function useObserverData(id: string | undefined) {
  const [list, setList] = useState<SessionSummary[] | null | undefined>(undefined);
  const [session, setSession] = useState<ObserverSessionResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [updatedAt, setUpdatedAt] = useState<number | null>(null);
  const [proposals, setProposals] = useState<Proposal[]>([]);
  const [notice, setNotice] = useState<string | null>(null);
  const loadProposals = () => observer.proposals().then((p) => setProposals(Array.isArray(p.open) ? p.open : []), () => setProposals([]));
  const seq = useObserverFeed((s) => s.seq);
  const seen = useRef(seq);
  const idRef = useRef(id);
  idRef.current = id;
  const loadList = () => observer.sessions().then((l) => { setList(l); setError(null); }, (e: Error) => setError(e.message));
  const loadSession = (sid: string) => observer.session(sid).then((s) => { if (idRef.current === sid) setSession(s); }, (e: Error) => setError(e.message));
  useEffect(() => {
    void loadList();
    void loadProposals();
  }, []);
  useEffect(() => {
    setSession(null);
    if (id) void loadSession(id);
  }, [id]);
  // Live: a burst of updates costs one reload of each (debounced).
  useEffect(() => {
    if (seq === seen.current) return;
    seen.current = seq;
    const timer = setTimeout(() => {
      const last = useObserverFeed.getState().last;
      void loadList();
      void loadProposals();
      if (idRef.current && (!last || last.sessionId === idRef.current)) void loadSession(idRef.current);
      setUpdatedAt(Date.now());
    }, 200);
    return () => clearTimeout(timer);
  }, [seq]);
  const decided = (message: string) => {
    setNotice(message);
    void loadProposals();
    if (idRef.current) void loadSession(idRef.current);
  };
  return { list, session, error, updatedAt, proposals, notice, decided };
}

export function ObserverScreen({ id }: { id?: string }) {
  const { t } = useTranslation();
  const { list, session, error, updatedAt, proposals, notice, decided } = useObserverData(id);
  return (
    <div className={styles.page}>
      <h2>{t('observer.title')}</h2>
      {error && <p role="alert" className={styles.error}>{error}</p>}
      <p className={styles.muted} aria-live="polite" data-testid="observer-updated">{updatedAt ? t('observer.updated', { time: new Date(updatedAt).toLocaleTimeString() }) : ''}</p>
      {list === null && <p className={styles.unavailable} role="status">{t('observer.unavailable')}</p>}
      {notice && <p role="status">{notice}</p>}
      {list && <Proposals proposals={proposals} onDecided={decided} />}
      {list && list.length === 0 && (
        <>
          <p className={styles.muted}>{t('observer.noSessions')}</p>
          <p className={styles.muted}>{t('observer.howToObserve')}</p>
        </>
      )}
      <div style={{ display: 'flex', gap: 16 }}>
        {list && list.length > 0 && <SessionList list={list} id={id} />}
        {session && <SessionView session={session} />}
      </div>
    </div>
  );
}

/** The sessions, the open one marked, each with its explorations, whether it is the last, and how it loaded. */
function SessionList({ list, id }: { list: SessionSummary[]; id: string | undefined }) {
  const { t } = useTranslation();
  return (
    <ul style={{ listStyle: 'none', padding: 0, width: 260, flexShrink: 0 }} aria-label={t('observer.sessions')}>
      {list.map((s) => (
        <li key={s.sessionId} className={styles.card}>
          <a href={href({ name: 'observer', id: s.sessionId })} aria-current={s.sessionId === id ? 'page' : undefined}>{s.intent?.nodeTitle ?? s.sessionId}</a>
          <p className={styles.muted}>
            {t('observer.explorations', { count: s.explorationCount })} {s.isLast && <span className={styles.badge}>{t('observer.last')}</span>}
            {s.load.status !== 'hit' && <span className={styles.badge} title={s.load.reason}>{t(`observer.load.${s.load.status}`)}</span>}
          </p>
        </li>
      ))}
    </ul>
  );
}

/** The open session: its flow graph, tokens and exploration cards, or why it could not be read. */
function SessionView({ session }: { session: ObserverSessionResponse }) {
  const { t } = useTranslation();
  return (
    <div style={{ flex: 1, minWidth: 0 }}>
      {!('explorations' in session) ? <p className={styles.unavailable} role="status">{t('observer.unreadable', { reason: `${t(`observer.load.${session.load.status}`)}${session.load.reason ? ` (${session.load.reason})` : ''}` })}</p> : (
        <>
          {session.flow && session.flow.nodes.length > 0 && <Flow flow={session.flow} />}
          {session.tokens && (session.tokens.total > 0 || session.tokens.input > 0 || session.tokens.output > 0) && (
            <p className={styles.muted}>
              {session.tokens.input || session.tokens.output ? t('observer.tokens', { input: session.tokens.input, output: session.tokens.output }) : t('observer.tokensTotal', { total: session.tokens.total })}
            </p>
          )}
          {session.explorations.map((e) => <Card key={e.id} e={e} />)}
        </>
      )}
    </div>
  );
}
