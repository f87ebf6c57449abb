/** Projects and the one selected (remembered across reloads). */
import { create } from 'zustand';
import { api } from '../api/client.js';
import type { Project } from '../api/types.js';

const KEY = 'maestro.project';

interface ProjectsState {
  projects: Project[];
  selectedId: string | null;
  error: string | null;
  loaded: boolean;
  load(): Promise<void>;
  select(id: string): void;
  replace(project: Project): void;
}

function remembered(): string | null {
  try {
    return localStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export const useProjects = create<ProjectsState>((set, get) => ({
  projects: [],
  // The remembered project, before the list arrives: its tasks load in parallel with the list.
  selectedId: remembered(),
  error: null,
  loaded: false,
  async load() {
    try {
      const { projects } = await api.projects();
      const wanted = get().selectedId ?? remembered();
      // By default an active project: an archived one is opened only when picked.
      const selectedId = projects.some((p) => p.id === wanted) ? wanted : ((projects.find((p) => p.archivedAt === null) ?? projects[0])?.id ?? null);
      set({ projects, selectedId, error: null, loaded: true });
    } catch (err) {
      set({ error: (err as Error).message, loaded: true });
    }
  },
  select(id) {
    try {
      localStorage.setItem(KEY, id);
    } catch {
      /* private mode: the choice lasts this page only */
    }
    set({ selectedId: id });
  },
  replace(project) {
    set({ projects: get().projects.map((p) => (p.id === project.id ? project : p)) });
  },
}));
