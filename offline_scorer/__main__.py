from offline_scorer.cli import main

main()
