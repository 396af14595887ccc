// The page's the forms that change rules, states and schedules: filled by its own issue 35 part.
"use strict";
