/** The open task: refreshed whenever the feed reports an event for it; says so if it disappears. */
import { lazy, Suspense, useCallback, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import i18n from '../../i18n/index.js';
import { errorText } from '../reasons.js';
import { api, ApiError } from '../../api/client.js';
import type { MergeCheckState, TaskDetail } from '../../api/types.js';
import { useProjects } from '../../stores/projects.js';
import { href, navigate } from '../../stores/route.js';
import { useTasks } from '../../stores/tasks.js';
import { DepGraph } from './DepGraph.js';
import { LoadBoundary } from '../LoadBoundary.js';
import { DiffGatePanel } from './DiffGatePanel.js';
import { MergeConflictPanel } from './MergeConflictPanel.js';
import { EditTask } from './EditTask.js';
import { Fields } from './Fields.js';
import { GateActions } from './GateActions.js';
import { LiveOutput } from './LiveOutput.js';
import { MessageBox } from './MessageBox.js';
import { TaskActions } from './TaskActions.js';
import { PlanSection } from './PlanSection.js';
import { TaskBrief } from './TaskBrief.js';
import { Runs } from './Runs.js';
import { StagedKnowledge } from './StagedKnowledge.js';
import { Trace } from './Trace.js';
import { Transcript } from './Transcript.js';
import { visible } from '../hiddenChars.js';
import styles from './Detail.module.css';

// The diff viewer and its grammars are a chunk of their own, fetched when a task with changes is opened.
const ReviewPanel = lazy(() => import('../review/ReviewPanel.js'));

/** Where a task has a branch worth reviewing: at the gate, and after (merging, done), or superseded by a reject. */
const HAS_CHANGES: ReadonlySet<string> = new Set(['exec_review', 'merging', 'done', 'superseded']);

/**
 * The task's detail, loaded again whenever the feed touches the task; `error.gone` once the daemon no longer
 * knows it. A task of another project selects that project and loads its board.
 */
function useTaskDetail(taskId: string) {
  const [detail, setDetail] = useState<TaskDetail | null>(null);
  const [error, setError] = useState<{ gone: boolean; message: string } | null>(null);
  const touched = useTasks((s) => s.touched[taskId] ?? 0);

  const reload = useCallback(async () => {
    try {
      const d = await api.task(taskId);
      setDetail(d);
      setError(null);
      // A link to another project's task shows that project's board behind it.
      const projects = useProjects.getState();
      if (projects.selectedId !== d.task.projectId) {
        projects.select(d.task.projectId);
        await useTasks.getState().load(d.task.projectId);
      }
      useTasks.getState().upsert(d.task, d.mergeCheck && { round: d.mergeCheck.round, maxRounds: d.mergeCheck.maxRounds, state: d.mergeCheck.state }, d.mergeTurn);
    } catch (err) {
      setError({ gone: err instanceof ApiError && err.status === 404, message: errorText(i18n.t, i18n.language, err) });
    }
  }, [taskId]);

  useEffect(() => {
    void reload();
  }, [reload, touched]);
  return { detail, error, reload };
}

export function TaskDetailPanel({ taskId, wide = false }: { taskId: string; wide?: boolean }) {
  const { t } = useTranslation();
  const { detail, error, reload } = useTaskDetail(taskId);
  const allTasks = useTasks((s) => s.byId);
  const heading = useRef<HTMLHeadingElement>(null);
  const focused = useRef(false);
  // The version the review panel's picker shows, said beside the gate when it is not the one decided on.
  const [shown, setShown] = useState<{ id: string; version: number } | null>(null);

  // Keyboard users land on the task they opened; Escape takes them back to its card.
  useEffect(() => {
    if (detail && !focused.current) {
      focused.current = true;
      heading.current?.focus();
    }
  }, [detail]);

  if (error && (error.gone || !detail)) {
    return (
      <div className={styles.panel} role="alert">
        <h2>{error.gone ? t('detail.gone') : t('detail.loadFailed')}</h2>
        <p className={styles.muted}>{error.message}</p>
        <button onClick={() => navigate({ name: 'board' })}>{t('detail.close')}</button>
      </div>
    );
  }
  if (!detail) return <p className={styles.panel}>{t('app.loading')}</p>;
  const { task, runs, children, lastDecision } = detail;
  const versions = detail.versions ?? [{ id: task.id, version: task.version, status: task.status }];
  // Done or superseded without an execute run, it made no change of its own: a planned parent (its subtasks made
  // them), or a version rejected at plan review. Its review said the diff could not be loaded, in red.
  const planFirst = task.status === 'plan_review';
  const review = HAS_CHANGES.has(task.status) && ((task.status !== 'superseded' && task.status !== 'done') || runs.some((r) => r.kind === 'execute'));
  return (
    <div className={styles.panel}>
      <div className={styles.head}>
        <h2 className={styles.title} data-testid="detail-title" ref={heading} tabIndex={-1}>
          {visible(task.title)}
        </h2>
        <span className={styles.row}>
          {review && (
            <a href={href({ name: 'board', taskId: task.id, wide: !wide })} data-testid="wide-toggle">
              {wide ? t('review.narrow') : t('review.wide')}
            </a>
          )}
          <button aria-label={t('detail.close')} onClick={() => navigate({ name: 'board' })}>
            ×
          </button>
        </span>
      </div>
      {error && <p role="alert" className={styles.err}>{error.message}</p>}
      <GateActions task={task} baseBranch={detail.baseBranch} baseMoved={detail.baseMoved ?? null} mergeBlocked={detail.mergeBlocked ?? null} steeringFiles={detail.steeringFiles ?? []} runsElsewhere={detail.runsElsewhere ?? []} shownVersion={shown?.id === task.id ? shown.version : task.version} onDone={reload} />
      <StagedKnowledge task={task} elsewhere={detail.knowledgeElsewhere} />
      {/* What was asked and what was wrong last time, before the evidence (and between the gate and "Cancel this task"). */}
      <TaskBrief task={task} baseBranch={detail.baseBranch} feedbackAt={detail.feedbackAt ?? null} />
      <WhatItWaitsFor detail={detail} />
      <MessageBox key={task.status === 'awaiting_input' ? 'reply' : 'other'} task={task} question={detail.question?.text ?? null} onDone={reload} />
      <TaskActions key={task.id} task={task} plainRetry={!detail.mergeConflict} onDone={reload} />
      <EditTask key={`edit-${task.id}`} task={task} onDone={reload} />
      <DiffGatePanel task={task} gate={detail.diffGate ?? null} />
      <MergeConflictPanel key={`conflict-${task.id}`} task={task} park={detail.mergeConflict ?? null} onDone={reload} />
      {/* At plan review the plan is what the gate decides on: right under it, as the changes are at exec_review. */}
      {planFirst && <PlanSection task={task} children={children} />}
      {review && (
        <LoadBoundary>
          <Suspense fallback={<p className={styles.muted}>{t('app.loading')}</p>}>
            <ReviewPanel key={task.id} task={task} versions={versions} onShow={(version) => setShown({ id: task.id, version })} />
          </Suspense>
        </LoadBoundary>
      )}
      <Fields task={task} runs={runs} />
      <DepGraph task={task} children={children} all={allTasks} />
      {!planFirst && <PlanSection task={task} children={children} />}
      <LiveOutput taskId={task.id} running={runs.some((r) => r.status === 'running')} />
      <Transcript taskId={task.id} runs={runs} />
      <Runs runs={runs} decision={lastDecision} />
      {runs.length > 0 && <Trace traceId={runs[runs.length - 1]!.traceId} />}
    </div>
  );
}

/** A person's part in a dependency on its way: one at a gate or asking a question waits for them. */
const WAITS_FOR_YOU: ReadonlySet<string> = new Set(['plan_review', 'spec_review', 'exec_review', 'awaiting_input']);

/**
 * Why the task does not start: a dependency that will not finish without a person, the dependencies still on their
 * way (its card says "ready"; `task show` names them too), or the project's slots all held.
 */
function WhatItWaitsFor({ detail }: { detail: TaskDetail }) {
  const { t } = useTranslation();
  const dep = (d: { title: string; status: string }) =>
    `“${visible(d.title)}” (${t(`status.${d.status}`, { defaultValue: d.status })}${WAITS_FOR_YOU.has(d.status) ? `, ${t('detail.waitsForYou')}` : ''})`;
  return (
    <>
      {!detail.stuckOn?.length && detail.waitingOn?.length ? (
        <p role="status" className={styles.muted} data-testid="waiting-on">
          {t('detail.waitingOn', { deps: detail.waitingOn.map(dep).join(', ') })}
        </p>
      ) : null}
      {detail.stuckOn?.length ? (
        <p role="status" className={styles.err} data-testid="stuck-on">
          {t('detail.stuckOn', { deps: detail.stuckOn.map((d) => `“${visible(d.title)}” (${t(`status.${d.status}`, { defaultValue: d.status })})`).join(', ') })}
        </p>
      ) : null}
      {detail.waitingForSlot ? (
        <p role="status" className={styles.muted} data-testid="waiting-for-slot">
          {t('detail.waitingForSlot', { limit: detail.waitingForSlot.limit, tasks: detail.waitingForSlot.held.map((h) => `“${visible(h.title)}” (${t(`status.${h.status}`, { defaultValue: h.status })})`).join(', ') })}
        </p>
      ) : null}
      <MergeCheckNow detail={detail} />
      {detail.mergeTurn ? (
        <p role="status" className={styles.muted} data-testid="merge-turn">
          {t(detail.mergeTurn.together ? 'detail.mergeTogether' : 'detail.mergeTurn', { title: visible(detail.mergeTurn.behind.title), id: visible(detail.mergeTurn.behind.id), count: detail.mergeTurn.together })}
        </p>
      ) : null}
      {detail.waitingForRun ? (
        <p role="status" className={styles.muted} data-testid="waiting-for-run">
          {t('detail.waitingForRun', { daemon: visible(detail.waitingForRun.daemon), limit: detail.waitingForRun.limit, runs: detail.waitingForRun.running.map((r) => `${r.kind} ${r.taskId}`).join(', ') })}
        </p>
      ) : null}
    </>
  );
}

/**
 * A task in merging whose merge check is at work: main is merged into its branch and the checks run on that (not
 * stuck); or whose check has no run yet, and why: being started on a free slot, waiting for a worker (every run slot
 * of the daemon taken), or left by a daemon that is gone (another takes it over).
 */
function MergeCheckNow({ detail }: { detail: TaskDetail }) {
  const { t } = useTranslation();
  const m = detail.mergeCheck;
  if (!m) return null;
  const base = visible(detail.baseBranch);
  const daemon = m.daemon !== null ? visible(m.daemon) : null;
  const noRun: Record<Exclude<MergeCheckState, 'running'>, () => string> = {
    starting: () => (daemon !== null ? t('detail.mergeCheckStartingOn', { base, daemon }) : t('detail.mergeCheckStarting', { base })),
    waiting: () => (daemon !== null ? t('detail.mergeCheckWaitingOn', { base, daemon }) : t('detail.mergeCheckWaiting', { base })),
    // Said only of a named daemon (store/ops/mergeCheckAtWork.ts).
    ownerGone: () => t('detail.mergeCheckOwnerGone', { base, daemon: daemon ?? '?' }),
  };
  if (m.state !== 'running') {
    return (
      <p role="status" className={styles.muted} data-testid="merge-check" data-state={m.state}>
        {noRun[m.state]()}
      </p>
    );
  }
  return (
    <p role="status" className={styles.muted} data-testid="merge-check">
      {m.check === null ? t('detail.mergeCheckMerging', { base }) : t('detail.mergeChecking', { base, check: visible(m.check) })}
      {m.round !== null && m.maxRounds !== null && m.daemon !== null ? ` ${t('detail.mergeCheckRound', { round: m.round, maxRounds: m.maxRounds, daemon: visible(m.daemon) })}` : null}
    </p>
  );
}
