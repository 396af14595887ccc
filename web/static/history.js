// The page's History and rollback: filled by its own issue 35 part.
"use strict";
