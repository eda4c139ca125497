#include "cli/run_main.h"

int main(int argc, char** argv) { return dpscope::cli::run_main(argc, argv); }
