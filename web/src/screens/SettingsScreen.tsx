/**
 * The project's configuration: the model tiers, checks, limits and hooks its repository's .maestro/ sets (read
 * through GET /api/projects/:id), the agent provider, and the settings the daemon stores editable as JSON
 * (validated before it is sent; the server validates again). Auto-approval is said while it is on, and a save that
 * changes it says what it means for the tasks at a gate.
 */
import { useEffect, useState } from 'react';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { api } from '../api/client.js';
import { autoApproveAfterMs, baseBranchOf, widensAutoApproval, type Project, type ProjectConfigResponse, type ProjectDetail } from '../api/types.js';
import { AgentTools } from '../components/AgentTools.js';
import { SteeringChanges } from '../components/SteeringChanges.js';
import { errorText } from '../components/reasons.js';
import { useProjects } from '../stores/projects.js';
import styles from './Screens.module.css';

type Repository = NonNullable<ProjectDetail['repository']>;

/**
 * One setting. Tiers, checks, limits and hooks are the repository's own (its .maestro/: the daemon stores none of
 * them), shown with the file they come from; "Not set" when it sets none.
 */
function Section({ title, value, file }: { title: string; value: unknown; file?: string | null }) {
  const { t } = useTranslation();
  return (
    <div className={styles.card}>
      <h3>{title}</h3>
      {value === undefined ? (
        <p className={styles.muted}>{t('settings.notSet')}</p>
      ) : (
        <>
          {file && <p className={styles.muted}>{t('settings.fromRepo', { file })}</p>}
          <pre>{JSON.stringify(value, null, 2)}</pre>
        </>
      )}
    </div>
  );
}

/** A list or record the repository sets, or undefined when it sets none. */
const someOf = (v: unknown[] | Record<string, unknown>) => (Array.isArray(v) ? v.length : Object.keys(v).length) ? v : undefined;

/** What the repository's .maestro/ sets (GET /api/projects/:id), null for a shared remote or until it is read. */
function useRepository(projectId: string | undefined): Repository | null {
  const [repo, setRepo] = useState<Repository | null>(null);
  useEffect(() => {
    setRepo(null);
    if (!projectId) return;
    let live = true;
    api.project(projectId).then((d) => live && setRepo(d.repository), () => undefined);
    return () => {
      live = false;
    };
  }, [projectId]);
  return repo;
}

/** Archive (reversible: the project keeps its tasks and history, and takes no new work) or restore. */
function ArchiveCard({ project }: { project: Project }) {
  const { t, i18n } = useTranslation();
  const replace = useProjects((s) => s.replace);
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const archived = project.archivedAt !== null;
  const act = async () => {
    setBusy(true);
    try {
      const { project: saved } = await api.archiveProject(project.id, !archived);
      replace(saved);
      setNote({ ok: true, text: t(archived ? 'settings.restored' : 'settings.archivedNow') });
    } catch (err) {
      setNote({ ok: false, text: errorText(t, i18n.language, err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className={styles.card}>
      <h3>{t('settings.archiveTitle')}</h3>
      <p className={styles.muted}>{archived ? t('settings.archivedSince', { when: new Date(project.archivedAt!).toLocaleString() }) : t('settings.archiveHelp')}</p>
      <div className={styles.row}>
        <button disabled={busy} onClick={() => void act()}>{t(archived ? 'settings.restore' : 'settings.archive')}</button>
        {note && <span role={note.ok ? 'status' : 'alert'} style={{ color: note.ok ? 'var(--ok)' : 'var(--bad)' }}>{note.text}</span>}
      </div>
    </div>
  );
}

/** "Saved.", and what a change of auto-approval means for the tasks at a gate (core/autoApproval.ts), as the CLI says it. */
function savedText(t: TFunction, change: ProjectConfigResponse['autoApproval']): string {
  if (!change) return t('settings.saved');
  if (change.afterMs === null) return t('settings.savedAutoApproveOff');
  if (widensAutoApproval(change.previousMs, change.afterMs)) return t('settings.savedAutoApproveOn', { ms: change.afterMs, waiting: change.waiting });
  return t('settings.savedAutoApproveLonger', { ms: change.afterMs, before: change.previousMs, waiting: change.waiting });
}

export function SettingsScreen() {
  const { t } = useTranslation();
  const project = useProjects((s) => s.projects.find((p) => p.id === s.selectedId));
  const replace = useProjects((s) => s.replace);
  const [text, setText] = useState('');
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const repo = useRepository(project?.id);
  // The box shows the stored configuration (a save replaces the project: the box then shows what was stored);
  // the note about a save stays until another project is shown. Cleared on every new project object, the
  // 'Saved.' a save had just drawn vanished before anyone could read it.
  const stored = project ? JSON.stringify(project.config, null, 2) : '';
  useEffect(() => setText(stored), [project?.id, stored]);
  useEffect(() => setNote(null), [project?.id]);
  if (!project) return <p className={styles.pad}>{t('board.pickProject')}</p>;
  const c = project.config as Record<string, unknown>;
  const save = async () => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      setNote({ ok: false, text: t('settings.badJson', { message: (err as Error).message }) });
      return;
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      setNote({ ok: false, text: t('settings.notObject') });
      return;
    }
    try {
      const { project: saved, autoApproval, cannotRun } = await api.updateProjectConfig(project.id, parsed as Record<string, unknown>, project.config as Record<string, unknown>);
      replace(saved);
      // Saved all the same; that no task can run with it is said at once, in the daemon's words (as the CLI says it).
      setNote(cannotRun ? { ok: false, text: `${savedText(t, autoApproval)} ${cannotRun}` } : { ok: true, text: savedText(t, autoApproval) });
    } catch (err) {
      setNote({ ok: false, text: (err as Error).message });
    }
  };
  return (
    <div className={styles.page}>
      <h2>{t('settings.title', { name: project.name })}</h2>
      <p className={styles.muted}>{project.repoPath}</p>
      <p className={styles.muted}>{t('settings.repoConfig')}</p>
      {repo?.problem && <p role="alert" style={{ color: 'var(--bad)' }}>{t('settings.repoProblem', { problem: repo.problem })}</p>}
      <div className={styles.grid}>
        <Section title={t('settings.tiers')} value={repo ? someOf(repo.models) : undefined} file={repo?.file} />
        <Section title={t('settings.checks')} value={repo ? someOf(repo.checks) : undefined} file={repo?.file} />
        <Section title={t('settings.hooks')} value={repo ? someOf(repo.hooks) : undefined} file=".maestro/" />
        <Section title={t('settings.limits')} value={repo ? someOf(repo.limits) : undefined} file={repo?.file} />
        <Section title={t('settings.provider')} value={c.provider} />
      </div>
      <SteeringChanges projectId={project.id} baseBranch={baseBranchOf(project)} />
      <AgentTools />
      <ArchiveCard key={project.id} project={project} />
      <div className={styles.card}>
        <label htmlFor="config-json">
          <h3>{t('settings.raw')}</h3>
        </label>
        {autoApproveAfterMs(c) !== null && <p className={styles.muted}>{t('settings.autoApproveOn', { ms: autoApproveAfterMs(c) })}</p>}
        <textarea id="config-json" className={styles.textarea} spellCheck={false} value={text} onChange={(e) => setText(e.target.value)} />
        <div className={styles.row}>
          <button onClick={() => void save()}>{t('settings.save')}</button>
          {note && <span role={note.ok ? 'status' : 'alert'} style={{ color: note.ok ? 'var(--ok)' : 'var(--bad)' }}>{note.text}</span>}
        </div>
      </div>
    </div>
  );
}
