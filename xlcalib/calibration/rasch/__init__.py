"""Scores read as ordered categories: the many-facet Rasch model (Linacre's FACETS; TAM's ``tam.mml.mfr``).

Not to be confused with :mod:`xlcalib.ordinal` (Svensson's method for the agreement of paired ordinal ratings):
this is a calibration model.  One module per step, in the order a fit runs them:

* :mod:`.categories` -- the ordered categories (declared scale or the scores given; unused ones left out);
* :mod:`.likelihood` -- the category probabilities and their derivatives;
* :mod:`.estimate` -- marginal maximum likelihood (objects random), adaptive quadrature, Newton's method, the
  gauge, the standard errors;
* :mod:`.measures` -- objects' measures (EAP) with standard errors that include the structural parameters'
  uncertainty, fair averages, thresholds;
* :mod:`.posterior` -- the joint distribution of the measures that rankings and lotteries draw from;
* :mod:`.residuals` -- each read against its leave-one-out prediction; infit, outfit, ZSTD;
* :mod:`.model` -- the whole fit of a checked panel; :mod:`.tables` -- FACETS' tables from it;
* :mod:`.simulate` -- panels with a known truth (tests, benchmarks).

At the models' floor: it reads the panel (:mod:`..panel`) and the graph's components (:mod:`..system`) only.
"""
