"""The assessor-object graph and what every model shares on it: the reduced assessor system and its solver,
the joint Gaussian posterior of values and biases, and the worst-case robustness bounds of the design."""
