// The page's Coming up: filled by its own issue 35 part.
"use strict";
