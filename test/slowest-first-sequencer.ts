/**
 * Test file order: the files known to take longest start first, so none of
 * them begins near the end of its project while the other workers sit idle.
 *
 * Vitest orders by the durations it cached from an earlier run, and without
 * that cache (a fresh clone, as in CI) by file size, largest first: there the
 * chaos file (a few lines driving ten scenarios for ~100 s) started last, and
 * the run took ~50 s longer than the same suite in duration order. The list
 * below comes from a full run (Vitest's per-file durations, longest first);
 * a file missing from it, or listed and gone, only keeps Vitest's own order.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

const SLOWEST_FIRST = [
  "test/integration/chaos.test.ts", // 100 s
  "test/e2e/console.test.ts", // 80 s
  "test/e2e/console-forms.test.ts", // 74 s
  "test/e2e/console-pages.test.ts", // 111 s (six journeys on one platform; 55 s alone)
  "test/integration/fairness-limits.test.ts", // 60 s
  "test/integration/schedules.test.ts", // 45 s
  "test/integration/durability-postgres-silence.test.ts", // 43 s
  "test/integration/realtime-resume.test.ts", // 34 s
  "test/integration/app-startup-failures.test.ts", // 29 s
  "test/e2e/console-resilience.test.ts", // 29 s
  "test/integration/cli.test.ts", // 28 s
  "test/integration/metrics-live-scrape.test.ts", // 27 s
  "test/integration/queue-rate-limits.test.ts", // 27 s
  "test/integration/push-execution.test.ts", // 26 s
  "test/integration/many-instances.test.ts", // 26 s
  "test/integration/quick-start.test.ts", // 26 s
  "test/integration/ops-dependency-outage.test.ts", // 25 s
  "test/integration/app-lifecycle.test.ts", // 25 s
  "test/security/ssrf.test.ts", // 14 s, the security project's longest
];

const rank = new Map(SLOWEST_FIRST.map((file, i) => [file, i]));

export class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = `${this.ctx.config.root}/`;
    const rankOf = (spec: TestSpecification) => rank.get(spec.moduleId.replace(root, ""));
    // Vitest's order keeps each project's files together; within each, the listed files go first, in list order.
    const byProject = new Map<string, TestSpecification[]>();
    for (const spec of sorted) {
      const specs = byProject.get(spec.project.name) ?? [];
      specs.push(spec);
      byProject.set(spec.project.name, specs);
    }
    return [...byProject.values()].flatMap((specs) => [
      ...specs.filter((s) => rankOf(s) !== undefined).sort((a, b) => rankOf(a)! - rankOf(b)!),
      ...specs.filter((s) => rankOf(s) === undefined),
    ]);
  }
}
