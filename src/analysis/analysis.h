// Analysis: everything a report needs, derived from a Snapshot the same way
// for live and imported ones. (Filled in by the analysis implementation.)
#pragma once

#include "model/snapshot.h"
