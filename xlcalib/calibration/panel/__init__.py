"""The panel as the core reads it: confidence levels, the evaluations as checked index arrays, the score grid's
resolution and the scale's ends, the arguments that name assessors and objects, and simulated panels with a
known truth.  The ground floor of the calibration family: nothing here knows a model."""
