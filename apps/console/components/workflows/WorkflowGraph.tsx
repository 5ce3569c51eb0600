"use client";

import { Background, Controls, MarkerType, ReactFlow, type Edge, type Node } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { useMemo } from "react";
import type { WorkflowNode as ApiNode } from "@/lib/api/types";
import { layoutByLevel } from "@/lib/workflow-layout";
import { WorkflowNode, type WorkflowNodeData } from "./WorkflowNode";

const COLUMN = 250;
const ROW = 110;
const nodeTypes = { task: WorkflowNode };

/** The workflow's DAG, read-only: pan and zoom, each node a link to its task. */
export function WorkflowGraph({ nodes }: { nodes: ApiNode[] }) {
  const { flowNodes, flowEdges } = useMemo(() => {
    const placed = new Map(layoutByLevel(nodes).map((p) => [p.key, p]));
    const flowNodes: Node<WorkflowNodeData>[] = nodes.map((n) => {
      const p = placed.get(n.key) ?? { level: 0, row: 0 };
      return {
        id: n.key,
        type: "task",
        position: { x: p.level * COLUMN, y: p.row * ROW },
        data: { label: n.key, type: n.task.type, status: n.task.status, taskId: n.task.id, attempts: `${n.task.attempts}/${n.task.maxAttempts}` },
        draggable: false,
        connectable: false,
        ariaLabel: `${n.key}: ${n.task.status}`,
      };
    });
    const keys = new Set(nodes.map((n) => n.key));
    const flowEdges: Edge[] = nodes.flatMap((n) =>
      n.dependsOn
        .filter((parent) => keys.has(parent))
        .map((parent) => ({
          id: `${parent}->${n.key}`,
          source: parent,
          target: n.key,
          animated: n.task.status === "RUNNING",
          markerEnd: { type: MarkerType.ArrowClosed },
        })),
    );
    return { flowNodes, flowEdges };
  }, [nodes]);
  return (
    <div className="graph-box" data-testid="workflow-graph">
      <ReactFlow
        nodes={flowNodes}
        edges={flowEdges}
        nodeTypes={nodeTypes}
        fitView
        nodesDraggable={false}
        nodesConnectable={false}
        elementsSelectable={false}
        // Read-only: each task's link is its one tab stop. With React Flow's keyboard handling on, every
        // node was a second tab stop described as "use the arrow keys to move the node around. Press
        // delete to remove it", which this graph does not allow (its own text, whatever ariaLabelConfig says).
        nodesFocusable={false}
        edgesFocusable={false}
        disableKeyboardA11y
        proOptions={{ hideAttribution: true }}
      >
        <Background gap={20} />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
