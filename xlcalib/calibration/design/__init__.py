"""Before any score: is a planned allocation calibratable (the design report and check), and who should read
what (the assignment under loads, conflicts and suitability)."""
