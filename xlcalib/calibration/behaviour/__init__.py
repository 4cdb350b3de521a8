"""How each assessor behaves, read off a fitted panel: fit statistics (infit, outfit), separation and exact
agreement, bias towards groups of objects, and the plain-words verdicts the Summary speaks."""
