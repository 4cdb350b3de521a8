"""From a calibrated panel to decisions: ranks, the funding line, P(above the line), the lottery, and the next
reads that settle the line best within the panel's rules.  Everything here reads a result's posterior; nothing
here fits a model."""
