import Link from "next/link";
import type { Queue } from "@/lib/api/types";
import { formatCount } from "@/lib/format";
import { StatusBadge } from "../ui/StatusBadge";
import { PauseButton } from "./PauseButton";

export function QueueTable({ queues }: { queues: Queue[] }) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">Queues</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Mode</th>
            <th scope="col" className="hide-sm">
              Endpoint
            </th>
            <th scope="col" className="num">
              Concurrency
            </th>
            <th scope="col" className="num">
              Rate limit
            </th>
            <th scope="col" className="num">
              Queued
            </th>
            <th scope="col" className="num">
              Running
            </th>
            <th scope="col">State</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {queues.map((q) => (
            <tr key={q.name} data-queue={q.name}>
              <td>
                <Link href={`/queues/${encodeURIComponent(q.name)}`}>{q.name}</Link>
              </td>
              <td>{q.mode}</td>
              <td className="truncate hide-sm" title={q.endpointUrl ?? undefined}>
                {q.endpointUrl ?? <span className="muted">—</span>}
              </td>
              <td className="num">{q.concurrency ?? "∞"}</td>
              <td className="num">{q.rateLimit ? `${q.rateLimit.perSecond}/s (burst ${q.rateLimit.burst})` : "—"}</td>
              <td className="num">{formatCount(q.stats.queued)}</td>
              <td className="num">{formatCount(q.stats.running)}</td>
              <td>{q.paused ? <StatusBadge status="PENDING" label="Paused" /> : <StatusBadge status="SUCCEEDED" label="Active" />}</td>
              <td>
                <span className="row" style={{ flexWrap: "nowrap" }}>
                  <Link className="button button-small" href={`/queues/${encodeURIComponent(q.name)}`}>
                    Edit
                  </Link>
                  <PauseButton name={q.name} paused={q.paused} small />
                </span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
