/**
 * Create a task in the selected project from the board (POST /api/tasks, as `maestro task create`): a title,
 * what it should do, a priority, a complexity and the tasks it waits for; the rest (owned files, …) is set
 * afterwards by Edit in its detail. The dependencies are given here, not by Edit: a ready task is claimed within a
 * tick, so one made without them had started before Edit could add them. The new task is put on the board at once and opened; a refusal is said under the form in the
 * person's language, the form kept. Not offered for an archived project, which takes no new work.
 */
import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { api } from '../api/client.js';
import { COMPLEXITIES, PRIORITIES, type Task } from '../api/types.js';
import { useProjects } from '../stores/projects.js';
import { navigate } from '../stores/route.js';
import { useTasks } from '../stores/tasks.js';
import { DepsField } from './detail/EditFields.js';
import { errorText } from './reasons.js';
import styles from './Board.module.css';

interface Draft {
  title: string;
  spec: string;
  priority: Task['priority'];
  complexity: Task['complexity'];
  deps: string[];
}

const EMPTY: Draft = { title: '', spec: '', priority: 1, complexity: 'medium', deps: [] };

export function NewTask() {
  const { t, i18n } = useTranslation();
  const project = useProjects((s) => s.projects.find((p) => p.id === s.selectedId));
  const [draft, setDraft] = useState<Draft | null>(null);
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<string | null>(null);
  if (!project || project.archivedAt !== null) return null;
  if (!draft) return <button onClick={() => (setDraft(EMPTY), setRefusal(null))}>{t('board.newTask')}</button>;

  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft({ ...draft, [key]: value });
  const title = draft.title.trim();
  const create = async (e: FormEvent) => {
    e.preventDefault();
    if (!title || busy) return;
    setBusy(true);
    setRefusal(null);
    try {
      const spec = draft.spec.trim();
      const { task } = await api.createTask({ projectId: project.id, title, ...(spec ? { spec } : {}), priority: draft.priority, complexity: draft.complexity, ...(draft.deps.length ? { deps: draft.deps } : {}) });
      useTasks.getState().upsert(task);
      setDraft(null);
      navigate({ name: 'board', taskId: task.id });
    } catch (err) {
      setRefusal(errorText(t, i18n.language, err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      className={styles.newTask}
      aria-label={t('board.newTask')}
      onSubmit={(e) => void create(e)}
      onKeyDown={(e) => {
        if (e.key !== 'Escape') return;
        e.stopPropagation();
        setDraft(null);
      }}
    >
      <label htmlFor="new-title">{t('field.title')}</label>
      <input id="new-title" autoFocus value={draft.title} maxLength={500} onChange={(e) => set('title', e.target.value)} />
      <label htmlFor="new-spec">{t('detail.spec')}</label>
      <textarea id="new-spec" value={draft.spec} onChange={(e) => set('spec', e.target.value)} />
      <label htmlFor="new-priority">{t('field.priority')}</label>
      <select id="new-priority" value={draft.priority} onChange={(e) => set('priority', Number(e.target.value) as Draft['priority'])}>
        {PRIORITIES.map((p) => (
          <option key={p} value={p}>{`P${p}`}</option>
        ))}
      </select>
      <label htmlFor="new-complexity">{t('field.complexity')}</label>
      <select id="new-complexity" value={draft.complexity} onChange={(e) => set('complexity', e.target.value as Draft['complexity'])}>
        {COMPLEXITIES.map((c) => (
          <option key={c} value={c}>{t(`complexity.${c}`)}</option>
        ))}
      </select>
      <DepsField taskId="" deps={draft.deps} onChange={(deps) => set('deps', deps)} inputId="new-dep" />
      <span />
      <span className={styles.newTaskButtons}>
        <button type="submit" disabled={busy || !title}>
          {t('board.create')}
        </button>
        <button type="button" onClick={() => setDraft(null)}>
          {t('edit.cancel')}
        </button>
      </span>
      {refusal && (
        <p role="alert" className={styles.refusal}>
          {refusal}
        </p>
      )}
    </form>
  );
}
