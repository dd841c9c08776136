$offlisting
$offdigit

EQUATIONS
	cuts_1__lo
	cuts_2__lo
	cuts_3__lo
	cuts_4__lo
	cuts_5__lo
	cuts_6__lo
	cuts_7__lo
	cuts_8__lo
	cuts_9__lo
	cuts_10__lo
	cuts_11__lo
	cuts_12__lo
	cuts_13__lo
	cuts_14__lo
	cuts_15__lo
	cuts_16__lo
	cuts_17__lo
	cuts_18__lo
	cuts_19__lo
	cuts_20__lo
	cuts_21__lo
	cuts_22__lo
	cuts_23__lo
	cuts_24__lo
	objective;

POSITIVE VARIABLES
	xi_0_
	xi_1_
	xi_2_
	xi_3_
	xi_4_
	xi_5_;

VARIABLES
	GAMS_OBJECTIVE
	gamma_6_
	gamma_9_;


cuts_1__lo.. 4 =l= (-0) + 0 + (-0) + 0 + (-0) + 0 + 8.215838360799198*gamma_6_ + (-4.743416490868588)*gamma_9_ + xi_0_ ;
cuts_2__lo.. 4 =l= (-0) + 0 + (-0) + 0 + (-0) + 0 + 8.215838360799198*gamma_6_ + (-4.743416490868588)*gamma_9_ + xi_1_ ;
cuts_3__lo.. 4 =l= (-0) + 0 + 0 + (-0) + (-0) + 0 + 0 + (-0) + xi_2_ ;
cuts_4__lo.. 4 =l= 0 + (-0) + 0 + (-0) + 0 + (-0) + 8.215838360799198*gamma_6_ + (-4.743416490868588)*gamma_9_ + xi_3_ ;
cuts_5__lo.. 4 =l= 0 + (-0) + 0 + (-0) + (-0) + 0 + 5.477225573866132*gamma_6_ + (-0) + 0 + (-3.162277660579059)*gamma_9_ + xi_4_ ;
cuts_6__lo.. 4 =l= 0 + (-0) + 0 + (-0) + (-0) + 0 + 8.215838360799198*gamma_6_ + (-4.743416490868588)*gamma_9_ + xi_5_ ;
cuts_7__lo.. 2 =l= 0 + (-0) + (-0) + 0 + 0 + (-0) + 8.215838360799198*gamma_6_ + (-0) + (-0) + xi_0_ ;
cuts_8__lo.. 1 =l= (-0) + 0 + (-0) + 0 + 0 + (-0) + 2.738612786933066*gamma_6_ + (-0) + xi_1_ ;
cuts_9__lo.. 2 =l= (-0) + 0 + (-0) + 0 + (-0) + 0 + (-8.215838360799198)*gamma_6_ + 0 + 0 + xi_2_ ;
cuts_10__lo.. 2 =l= 0 + (-0) + 0 + (-0) + 0 + (-0) + 5.477225573866132*gamma_6_ + (-0) + (-0) + xi_3_ ;
cuts_11__lo.. 2 =l= 0 + (-0) + 0 + (-0) + 0 + (-0) + 2.738612786933066*gamma_6_ + (-0) + xi_4_ ;
cuts_12__lo.. 2 =l= 0 + (-0) + 0 + (-0) + 0 + (-0) + 5.477225573866132*gamma_6_ + (-0) + (-0) + xi_5_ ;
cuts_13__lo.. 1 =l= (-0) + 0 + 0 + (-0) + (-0) + 0 + 2.738612786933066*gamma_6_ + (-0) + xi_0_ ;
cuts_14__lo.. 2 =l= (-0) + 0 + 0 + (-0) + (-0) + 0 + 8.215838360799198*gamma_6_ + (-0) + (-0) + xi_1_ ;
cuts_15__lo.. 3 =l= (-0) + 0 + (-0) + 0 + (-0) + 0 + (-5.477225573866132)*gamma_6_ + 0 + xi_2_ ;
cuts_16__lo.. 1 =l= (-0) + 0 + 0 + (-0) + (-0) + 0 + 5.477225573866132*gamma_6_ + (-0) + (-0) + xi_3_ ;
cuts_17__lo.. 2 =l= 0 + (-0) + 0 + (-0) + (-0) + 0 + (-0) + 0 + xi_4_ ;
cuts_18__lo.. 1 =l= 0 + (-0) + 0 + (-0) + 0 + (-0) + 2.738612786933066*gamma_6_ + (-0) + xi_5_ ;
cuts_19__lo.. 1 =l= 0 + (-0) + (-0) + 0 + 0 + (-0) + 2.738612786933066*gamma_6_ + (-0) + xi_0_ ;
cuts_20__lo.. 2 =l= (-0) + 0 + 0 + (-0) + 0 + (-0) + 5.477225573866132*gamma_6_ + (-0) + (-0) + xi_1_ ;
cuts_21__lo.. 3 =l= (-0) + 0 + 0 + (-0) + 0 + (-0) + (-2.738612786933066)*gamma_6_ + 0 + xi_2_ ;
cuts_22__lo.. 1 =l= 0 + (-0) + 0 + (-0) + 0 + (-0) + 2.738612786933066*gamma_6_ + (-0) + xi_3_ ;
cuts_23__lo.. 1 =l= 0 + (-0) + 0 + (-0) + 0 + (-0) + (-2.738612786933066)*gamma_6_ + 0 + xi_4_ ;
cuts_24__lo.. 2 =l= 0 + (-0) + (-0) + 0 + (-0) + 0 + 5.477225573866132*gamma_6_ + (-0) + (-0) + xi_0_ ;
objective.. GAMS_OBJECTIVE =e= 0*0 + 0*0 + 0*0 + 0*0 + 0*0 + 0*0 + gamma_6_*gamma_6_ + 0*0 + 0*0 + gamma_9_*gamma_9_ + (xi_0_ + xi_1_ + xi_2_ + xi_3_ + xi_4_ + xi_5_) ;

xi_0_.l = 0;
xi_1_.l = 0;
xi_2_.l = 5;
xi_3_.l = 0;
xi_4_.l = 2;
xi_5_.l = 0;
gamma_6_.l = 0.36514837174914594;
gamma_9_.l = -0.21081851065051349;

MODEL GAMS_MODEL /all/ ;
option solprint=off;
option limrow=0;
option limcol=0;
option solvelink=5;
SOLVE GAMS_MODEL USING nlp minimizing GAMS_OBJECTIVE;

Scalars MODELSTAT 'model status', SOLVESTAT 'solve status';
MODELSTAT = GAMS_MODEL.modelstat;
SOLVESTAT = GAMS_MODEL.solvestat;

Scalar OBJEST 'best objective', OBJVAL 'objective value';
OBJEST = GAMS_MODEL.objest;
OBJVAL = GAMS_MODEL.objval;

Scalar NUMVAR 'number of variables';
NUMVAR = GAMS_MODEL.numvar

Scalar NUMEQU 'number of equations';
NUMEQU = GAMS_MODEL.numequ

Scalar NUMDVAR 'number of discrete variables';
NUMDVAR = GAMS_MODEL.numdvar

Scalar NUMNZ 'number of nonzeros';
NUMNZ = GAMS_MODEL.numnz

Scalar ETSOLVE 'time to execute solve statement';
ETSOLVE = GAMS_MODEL.etsolve

