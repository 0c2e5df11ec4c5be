// The matcher's measured quality at the full size of the OFAC SDN list (synthetic, official XML format): the
// floors the issue sets, so a change to normalisation, blocking or thresholds that loses recall or flags common
// names fails here. Same measurement as `npm run screening:quality`.
import { measureQuality, type QualityReport } from '../scripts/lib/screening-quality';

describe('screening quality at full list size', () => {
  let report: QualityReport;
  beforeAll(async () => {
    report = await measureQuality();
  }, 120_000);

  it('loads a list of OFAC SDN size through the real loader', () => {
    expect(report.list.entries).toBe(18_000);
    expect(report.list.names).toBeGreaterThan(38_000);
  });

  it('finds at least 98% of list names under real-world variations, each variation at least 95%', () => {
    expect(report.recall).toBeGreaterThanOrEqual(0.98);
    for (const recall of Object.values(report.recall_by_variation)) expect(recall).toBeGreaterThanOrEqual(0.95);
  });

  it('flags at most 1% of common names that are on no list', () => {
    expect(report.false_positive_rate).toBeLessThanOrEqual(0.01);
  });

  // Under 20 ms at the 99th percentile on the machine the issue measured, said as CPU time (a preempted call's wall
  // time says more about the load of two shared cores than about the matcher) against a baseline of string work run
  // between the screenings (its median is about 1.9 ms there): under 10 of those. `npm run screening:quality`
  // reports the wall times too.
  it('screens a name at the 99th percentile in under 10 times the CPU of the reference string work', () => {
    expect(report.cpu_ms.p99 / report.reference_cpu_ms).toBeLessThan(10);
  });
});
