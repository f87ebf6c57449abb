import '@fontsource/ibm-plex-mono/400.css';
import '@fontsource/ibm-plex-mono/600.css';
import './global.css';
import './i18n/index.js';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.js';
import { useDaemons } from './stores/daemons.js';
import { useProjects } from './stores/projects.js';
import { useTasks } from './stores/tasks.js';

// Ask for the data before React's first render: the remembered project's tasks and the project list load together.
void useProjects.getState().load();
const remembered = useProjects.getState().selectedId;
if (remembered) void useTasks.getState().load(remembered);
// Whether other daemons share the database: the board names them (and which ran what) only then.
void useDaemons.getState().load();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
