import type { ComponentChildren } from 'preact';
import type { JourneyStep } from '../core/journeySteps.js';
import { RelTime } from './RelTime.js';

/**
 * The steps something a person waits on has taken, in order, each with its age (absolute time on hover):
 * an approval's journey and a plan request's (docs/decisions/560-plan-request-states.md). A step not
 * taken (no time) is left out; `children` add lines after the last step (the next plan, say).
 */
export function Journey({
  steps,
  now,
  label,
  children,
}: {
  steps: readonly JourneyStep[];
  now: number;
  label?: string;
  children?: ComponentChildren;
}) {
  return (
    <ol class="journey" aria-label={label}>
      {steps.map((s) =>
        s.at ? (
          <li key={s.label}>
            {s.label} <RelTime iso={s.at} now={now} />
          </li>
        ) : null,
      )}
      {children}
    </ol>
  );
}
