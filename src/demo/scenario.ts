/**
 * The offline demo's scripted agent (docs/scripted-agent.md). One parent task
 * is planned into three dependent subtasks: the first asks a clarifying
 * question, the second is rejected by code review once and fixed in the
 * second round, and the second and third both edit README.md, so whichever
 * comes second meets a real merge conflict that a conflict run resolves.
 * The first run's report (.maestro/report.md) records an accepted decision
 * and a locked constraint: the demo promotes the decision by itself (so the
 * next tasks' briefs cite it) and leaves the constraint for a person to review.
 */
export const DEMO_SCENARIO = `# Maestro demo scenario: the scripted agent's answers.
steps:
  - match: { role: plan }
    actions:
      - text: "Reading the repository: a README and an empty src/. The greeting needs a core, a command line and documentation.\\n"
      - plan:
          plan: "Build the greeting in three steps: the core function first, then the command line and the documentation, which both build on it."
          subtasks:
            - { title: "Define the greeting", complexity: easy, priority: P0, deps: [], ownedFiles: [src/greet.js], expectedOutput: "src/greet.js exports greet(name)" }
            - { title: "Add the command line", complexity: medium, priority: P1, deps: [0], ownedFiles: [src/cli.js, test/cli.test.js, README.md], expectedOutput: "node src/cli.js Ada prints a greeting, with a test" }
            - { title: "Document the greeting", complexity: easy, priority: P2, deps: [0], ownedFiles: [README.md], expectedOutput: "README explains the greeting" }

  - match: { role: execute, title: "Define the greeting" }
    actions:
      - text: "Before writing the greeting I need one decision.\\n"
      - ask: "Which greeting should greet(name) use?"
      - text: "Using the greeting you chose.\\n"
      - write: { path: src/greet.js, content: "// The greeting chosen during the demo run.\\nexport function greet(name) {\\n  return '{{reply}}'.replace('{name}', name);\\n}\\n" }
      - write: { path: .maestro/report.md, content: "---\\nverdict: done\\nsummary: greet(name) is defined in src/greet.js.\\ndecisions:\\n  - text: The command line and the documentation call greet(name) from src/greet.js; no other module builds the greeting text.\\n    status: accepted\\nconstraints:\\n  - text: The greeting always names the person it greets.\\n    status: locked\\n---\\n\\ngreet(name) is defined; the reply chose its words.\\n" }

  - match: { role: execute, title: "Add the command line", prompt: "Feedback" }
    actions:
      - text: "Addressing the review: adding a test for the command line.\\n"
      - write: { path: test/cli.test.js, content: "import { greet } from '../src/greet.js';\\nif (!greet('Ada').includes('Ada')) throw new Error('greet must name the person');\\n" }

  - match: { role: execute, title: "Add the command line" }
    actions:
      - text: "Writing src/cli.js and a usage line in the README.\\n"
      - write: { path: src/cli.js, content: "import { greet } from './greet.js';\\nconsole.log(greet(process.argv[2] ?? 'world'));\\n" }
      - write: { path: README.md, content: "# greeter\\n\\nA tiny demo project for Maestro.\\n\\nUsage: node src/cli.js <name>\\n" }

  - match: { role: execute, title: "Document the greeting" }
    actions:
      - text: "Documenting the greeting in the README.\\n"
      - write: { path: README.md, content: "# greeter\\n\\nA tiny demo project for Maestro.\\n\\ngreet(name) returns the greeting chosen for this project.\\n" }

  - match: { role: "review:code", title: "Add the command line" }
    times: 1
    actions:
      - text: "The command line works, but nothing tests it.\\n"
      - verdict: { verdict: reject, findings: [{ severity: high, file: src/cli.js, message: "No test covers the command line; add one." }] }

  - match: { role: review }
    actions:
      - text: "Looks right.\\n"
      - verdict: { verdict: approve, findings: [] }

  - match: { role: conflict }
    actions:
      - text: "Both changes rewrote README.md; keeping the usage line and the description.\\n"
      - write: { path: README.md, content: "# greeter\\n\\nA tiny demo project for Maestro.\\n\\ngreet(name) returns the greeting chosen for this project.\\n\\nUsage: node src/cli.js <name>\\n" }

  - match: { role: reflect }
    actions:
      - text: "The last tries failed; trying again with the same plan.\\n"
`;
