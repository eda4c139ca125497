// Importers: text other tools printed -> Snapshot. Each throws InputError
// (file:line: what) on bad input and never leaves a partial result behind.
#pragma once

#include <string>

#include "model/snapshot.h"

namespace dpscope::importer {

// (Declarations are added by the importer implementation.)

}  // namespace dpscope::importer
