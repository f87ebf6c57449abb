/** What the API is built from (buildApi in server.ts); the route modules read it too. */
import type { FastifyInstance } from 'fastify';
import type { DaemonSettings } from '../core/daemonSettings.js';
import type { Project } from '../core/types.js';
import type { RunControl } from '../daemon/runControl.js';
import type { Bus } from '../lib/bus.js';
import type { KnowledgeBridge } from '../knowledge/lifecycle/bridge.js';
import type { Store } from '../store/store.js';
import type { GuardConfig } from './guard.js';
import type { OpenApiDoc } from './route.js';
import type { HealthResponse } from './wire/responses.js';
import type { StopProgressLine } from './wire/daemons.js';

/** A stop's progress as the daemon publishes it (app/stopRequest.ts StopProgress), for POST /api/daemon/stop?follow=true. */
export interface StopProgressView {
  /** Where the stop is: null before it began. */
  now(): StopProgressLine | null;
  /** Told of each change; returns the unsubscribe. */
  onChange(fn: (line: StopProgressLine) => void): () => void;
  /** An answer following the stop: the daemon closes its port only once it has ended (or a short while after the last line). */
  hold(ended: Promise<void>): void;
}

export interface ApiDeps {
  store: Store;
  bus: Bus;
  /** `token` null: no token asked (`maestro serve --no-auth`, loopback only). */
  config: GuardConfig;
  control: RunControl;
  logError: (err: Error) => void;
  /** The daemon's health conditions (a full disk, a read-only home) for GET /api/health. */
  health?: () => HealthResponse;
  /** The environment agent workers get (PATH, credentials): what GET /api/agents looks at. */
  agentEnv?: NodeJS.ProcessEnv;
  /**
   * Why a project's tasks could not run (no usable agent provider), or null.
   * Set by a daemon that runs tasks: creating a task there is refused with the fix.
   */
  providerProblem?: (project: Project) => string | null;
  /** The daemon's home (its token, database, run files): no project may be registered at or above it. */
  home?: string;
  /** The repository holding a project's task branches (a shared remote's: this host's clone); its repoPath when absent. */
  repoFor?: (project: Project) => string;
  /** Fetches a project's shared remote into this host's clone, so that a diff finds work another daemon pushed. */
  refreshRepo?: (project: Project) => Promise<void>;
  /**
   * The daemon's name and how many tasks of one project it takes at a time (maxConcurrentRunsPerProject): a ready
   * task's detail says when it waits for one of those places, and which tasks hold them.
   */
  slots?: { owner: string; perProject: number };
  /**
   * The daemon's knowledge bridge and home: at a task's gate its detail imports the candidates its runs on other
   * daemons proposed (daemon/knowledgeImport.ts). Absent, nothing is imported and none is named.
   */
  knowledge?: { bridge: KnowledgeBridge; home: string };
  /** This daemon on the database: its name and settings, which GET /api/daemons compares the others' with. */
  self?: { name: string; settings: DaemonSettings };
  /**
   * How POST /api/daemon/stop stops this daemon, as one SIGTERM does (`maestro stop`): `request` is called once the
   * answer is sent. Absent (an API without a daemon behind it), the route is not served.
   */
  stop?: { request: () => void; graceMs: number; home: string; progress?: StopProgressView };
  /** Extra route plugins (knowledge, observer, the web board); `doc` lists their routes at /api/openapi.json. */
  plugins?: ((app: FastifyInstance, doc: OpenApiDoc) => Promise<void> | void)[];
}
