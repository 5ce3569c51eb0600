"use client";

import { Handle, Position, type NodeProps, type Node } from "@xyflow/react";
import Link from "next/link";
import { toneOf } from "@/lib/statuses";

export type WorkflowNodeData = { label: string; type: string; status: string; taskId: string; attempts: string };

/** One task of the graph, coloured by status (and saying it, for those who cannot see colour). */
export function WorkflowNode({ data }: NodeProps<Node<WorkflowNodeData>>) {
  return (
    <>
      <Handle type="target" position={Position.Left} isConnectable={false} />
      <Link className={`wf-node tone-${toneOf(data.status)}`} href={`/tasks/${data.taskId}`} data-node-status={data.status}>
        <strong>{data.label}</strong>
        <span className="muted">{data.type}</span>
        <span className="row" style={{ marginTop: "0.25rem" }}>
          <span className={`badge tone-${toneOf(data.status)}`}>{data.status}</span>
          <span className="muted small">{data.attempts}</span>
        </span>
      </Link>
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </>
  );
}
