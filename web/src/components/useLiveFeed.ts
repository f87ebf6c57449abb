/** Opens the WebSocket feed once for the app; task events patch the board, observer updates go to the observer screen, health changes to the banner; each time it opens the tasks reload, after a drop all the rest too. */
import { useEffect, useRef } from 'react';
import { openFeed, wsUrl } from '../api/ws.js';
import { useConnection } from '../stores/connection.js';
import { useHealth } from '../stores/health.js';
import { useObserverFeed } from '../stores/observer.js';
import { useProjects } from '../stores/projects.js';
import { useTasks } from '../stores/tasks.js';

export function useLiveFeed(): void {
  const selectedId = useProjects((s) => s.selectedId);
  const feed = useRef<ReturnType<typeof openFeed> | null>(null);
  useEffect(() => {
    void useHealth.getState().load();
    feed.current = openFeed(wsUrl(), {
      onEvent: (e) => {
        if (useHealth.getState().apply(e)) return;
        if (!useObserverFeed.getState().apply(e)) useTasks.getState().applyEvent(e);
      },
      onState: (state, reconnected) => {
        useConnection.getState().setState(state, reconnected);
        if (state !== 'open') return;
        // The socket sends what happens from now on: the tasks are read again from now on too (the first
        // read may have been taken before the socket opened, and what changed in between never comes).
        const pid = useTasks.getState().projectId;
        if (pid) void useTasks.getState().load(pid);
        if (reconnected) {
          void useHealth.getState().load();
          useObserverFeed.getState().missed();
          void useProjects.getState().load();
        }
      },
    });
    return () => feed.current?.close();
  }, []);
  useEffect(() => {
    feed.current?.subscribe(selectedId);
    if (selectedId) void useTasks.getState().load(selectedId);
  }, [selectedId]);
}
