// The page's the event log in words, filters, Why?: filled by its own issue 35 part.
"use strict";
