/**
 * The `yaml` package, loaded on its first use: most processes that could read YAML never do (a run
 * worker reads a project's `config.yaml` only when it has one, and a scripted agent's script only
 * in tests and demos), and loading it costs each a third of a bare Node start (28 ms of CPU).
 */
import { createRequire } from 'node:module';

type Yaml = typeof import('yaml');
let loaded: Yaml | undefined;

export function yaml(): Yaml {
  loaded ??= createRequire(import.meta.url)('yaml') as Yaml;
  return loaded;
}
