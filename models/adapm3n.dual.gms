$offlisting
$offdigit

EQUATIONS
	budget_0__hi
	budget_1__hi
	budget_2__hi
	budget_3__hi
	budget_4__hi
	budget_5__hi
	stationarity_6_
	stationarity_9_
	objective;

POSITIVE VARIABLES
	alpha_1_
	alpha_7_
	alpha_13_
	alpha_19_
	alpha_24_
	alpha_2_
	alpha_8_
	alpha_14_
	alpha_20_
	alpha_3_
	alpha_9_
	alpha_15_
	alpha_21_
	alpha_4_
	alpha_10_
	alpha_16_
	alpha_22_
	alpha_5_
	alpha_11_
	alpha_17_
	alpha_23_
	alpha_6_
	alpha_12_
	alpha_18_;

VARIABLES
	GAMS_OBJECTIVE
	w_6_
	w_9_;


budget_0__hi.. alpha_1_ + alpha_7_ + alpha_13_ + alpha_19_ + alpha_24_ =l= 1 ;
budget_1__hi.. alpha_2_ + alpha_8_ + alpha_14_ + alpha_20_ =l= 1 ;
budget_2__hi.. alpha_3_ + alpha_9_ + alpha_15_ + alpha_21_ =l= 1 ;
budget_3__hi.. alpha_4_ + alpha_10_ + alpha_16_ + alpha_22_ =l= 1 ;
budget_4__hi.. alpha_5_ + alpha_11_ + alpha_17_ + alpha_23_ =l= 1 ;
budget_5__hi.. alpha_6_ + alpha_12_ + alpha_18_ =l= 1 ;
stationarity_6_.. w_6_ + (-11.249999995129942)*alpha_1_ + (-11.249999995129942)*alpha_2_ + (-11.249999995129942)*alpha_4_ + (-7.4999999967532949)*alpha_5_ + (-11.249999995129942)*alpha_6_ + (-11.249999995129942)*alpha_7_ + (-3.7499999983766474)*alpha_8_ + 11.249999995129942*alpha_9_ + (-7.4999999967532949)*alpha_10_ + (-3.7499999983766474)*alpha_11_ + (-7.4999999967532949)*alpha_12_ + (-3.7499999983766474)*alpha_13_ + (-11.249999995129942)*alpha_14_ + 7.4999999967532949*alpha_15_ + (-7.4999999967532949)*alpha_16_ + (-3.7499999983766474)*alpha_18_ + (-3.7499999983766474)*alpha_19_ + (-7.4999999967532949)*alpha_20_ + 3.7499999983766474*alpha_21_ + (-3.7499999983766474)*alpha_22_ + 3.7499999983766474*alpha_23_ + (-7.4999999967532949)*alpha_24_ =e= 0 ;
stationarity_9_.. w_9_ + 3.750000000974012*alpha_1_ + 3.750000000974012*alpha_2_ + 3.750000000974012*alpha_4_ + 2.5000000006493415*alpha_5_ + 3.750000000974012*alpha_6_ =e= 0 ;
objective.. GAMS_OBJECTIVE =e= (4*alpha_1_ + 4*alpha_2_ + 4*alpha_3_ + 4*alpha_4_ + 4*alpha_5_ + 4*alpha_6_ + 2*alpha_7_ + alpha_8_ + 2*alpha_9_ + 2*alpha_10_ + 2*alpha_11_ + 2*alpha_12_ + alpha_13_ + 2*alpha_14_ + 3*alpha_15_ + alpha_16_ + 2*alpha_17_ + alpha_18_ + alpha_19_ + 2*alpha_20_ + 3*alpha_21_ + alpha_22_ + alpha_23_ + 2*alpha_24_) - (0.13333333339105252*w_6_*w_6_ + 0.39999999989610535*w_9_*w_9_) ;

alpha_1_.l = 0;
alpha_7_.l = 0;
alpha_13_.l = 0;
alpha_19_.l = 0;
alpha_24_.l = 0;
alpha_2_.l = 0;
alpha_8_.l = 0;
alpha_14_.l = 0;
alpha_20_.l = 0;
alpha_3_.l = 0;
alpha_9_.l = 0;
alpha_15_.l = 0;
alpha_21_.l = 0;
alpha_4_.l = 0;
alpha_10_.l = 0;
alpha_16_.l = 0;
alpha_22_.l = 0;
alpha_5_.l = 0;
alpha_11_.l = 0;
alpha_17_.l = 0;
alpha_23_.l = 0;
alpha_6_.l = 0;
alpha_12_.l = 0;
alpha_18_.l = 0;
w_6_.l = 0;
w_9_.l = 0;

MODEL GAMS_MODEL /all/ ;
option solprint=off;
option limrow=0;
option limcol=0;
option solvelink=5;
SOLVE GAMS_MODEL USING nlp maximizing GAMS_OBJECTIVE;

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

