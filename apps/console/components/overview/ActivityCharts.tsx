"use client";

import { Area, AreaChart, Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { ActivityBucket } from "@/lib/api/types";

const TIME = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", hour12: false, timeZone: "UTC" });

interface Point {
  time: string;
  perMinute: number;
  failureRate: number | null;
}

/**
 * One queue's last hour: completions per minute (area) and the share of
 * finished attempts that failed (bars: a bucket without attempts has none). Recharts draws them (with its keyboard
 * accessibility layer); a text summary precedes them for screen readers.
 */
export function ActivityCharts({ queue, buckets, bucketMinutes }: { queue: string; buckets: ActivityBucket[]; bucketMinutes: number }) {
  const points: Point[] = buckets.map((b) => {
    const finished = b.succeeded + b.failed;
    return {
      time: TIME.format(new Date(b.start)),
      perMinute: Number((b.succeeded / bucketMinutes).toFixed(2)),
      failureRate: finished === 0 ? null : Number(((b.failed / finished) * 100).toFixed(1)),
    };
  });
  const succeeded = buckets.reduce((n, b) => n + b.succeeded, 0);
  const failed = buckets.reduce((n, b) => n + b.failed, 0);
  const rate = succeeded + failed === 0 ? null : (failed / (succeeded + failed)) * 100;
  return (
    <div className="chart-grid">
      <p className="visually-hidden">
        Queue {queue}, last hour: {succeeded} tasks succeeded, {failed} attempts failed{rate === null ? "" : `, failure rate ${rate.toFixed(1)} percent`}.
      </p>
      <figure className="chart" style={{ margin: 0 }}>
        <h3>Throughput (succeeded per minute, UTC)</h3>
        <div className="chart-box" aria-hidden="true">
          <ResponsiveContainer width="100%" height="100%">
            <AreaChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
              <CartesianGrid strokeDasharray="3 3" stroke="#e5e7eb" />
              <XAxis dataKey="time" tick={{ fontSize: 11 }} interval="preserveStartEnd" minTickGap={24} />
              <YAxis tick={{ fontSize: 11 }} allowDecimals />
              <Tooltip formatter={(value) => [`${String(value)} / min`, "Succeeded"]} />
              <Area type="monotone" dataKey="perMinute" stroke="#3550d6" fill="#c9d2fa" strokeWidth={2} isAnimationActive={false} />
            </AreaChart>
          </ResponsiveContainer>
        </div>
      </figure>
      <figure className="chart" style={{ margin: 0 }}>
        <h3>Failure rate (% of finished attempts)</h3>
        <div className="chart-box" aria-hidden="true">
          <ResponsiveContainer width="100%" height="100%">
            <BarChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
              <CartesianGrid strokeDasharray="3 3" stroke="#e5e7eb" />
              <XAxis dataKey="time" tick={{ fontSize: 11 }} interval="preserveStartEnd" minTickGap={24} />
              <YAxis tick={{ fontSize: 11 }} domain={[0, 100]} unit="%" />
              <Tooltip formatter={(value) => [value === null ? "no attempts" : `${String(value)}%`, "Failed"]} />
              <Bar dataKey="failureRate" fill="#d9534f" isAnimationActive={false} />
            </BarChart>
          </ResponsiveContainer>
        </div>
      </figure>
    </div>
  );
}
